//go:build unix && !linux

package mcp

import "syscall"

func parentDeath(*syscall.SysProcAttr) {}
