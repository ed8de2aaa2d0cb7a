//go:build unix && !linux

package mcp

import "syscall"

// dieWithParent does nothing: only Linux (and FreeBSD, not wired here) can have the
// kernel kill a child when its parent dies.
func dieWithParent(*syscall.SysProcAttr) {}
