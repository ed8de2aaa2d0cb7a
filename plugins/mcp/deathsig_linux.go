package mcp

import "syscall"

// dieWithParent has the kernel send the child SIGKILL when its parent dies, so that a
// stdio server does not outlive anima killed with SIGKILL (or crashing). The "parent" is
// the OS thread that forked the child, not the process: spawned.Connect forks it from a
// thread locked for the child's lifetime. It reaches the server only: the processes the
// server starts stay in its process group, which the next start ends (procFile.reap).
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
