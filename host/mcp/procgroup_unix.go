//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own, so that stopping the
// server stops what it started (npx runs node).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

// killGroup kills the process group led by pid, if any is left.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
