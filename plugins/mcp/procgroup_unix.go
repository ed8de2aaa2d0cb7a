//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that killGroup reaches its
// children too, and (on Linux) has the kernel kill it when anima dies (dieWithParent).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// killGroup sends SIGKILL to cmd's process group (what is left of it after the SDK closed
// the session: a grandchild that outlived its parent).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		killPgid(cmd.Process.Pid)
	}
}

// killPgid sends SIGKILL to every process in group pgid.
func killPgid(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
