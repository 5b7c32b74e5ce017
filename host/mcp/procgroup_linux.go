package mcp

import "syscall"

// parentDeath has the server killed when rlmpl dies without stopping it
// (kill -9).
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
