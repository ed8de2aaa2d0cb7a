//go:build !unix

package mcp

import "os/exec"

func ownGroup(*exec.Cmd) {}

// killGroup kills cmd itself: there are no process groups to end here.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// killPgid does nothing: no process group is recorded here (readStat).
func killPgid(int) {}
