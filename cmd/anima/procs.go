package main

import (
	"os"
	"runtime"
)

// oneProc runs the service on one P (GOMAXPROCS 1) unless the environment sets GOMAXPROCS;
// it returns the P count in force.
//
// A message is a relay of goroutines that each run for microseconds: the poll loop hands
// the update to the core loop, which starts the chat's run, whose model request and
// Telegram send each go through the HTTP transport's reader and writer. With a second P
// idle, every hand-off wakes another thread (futex) that spins looking for work and parks
// again — CPU spent on scheduling, not on the message. Telegram caps a bot at about 30
// messages a second, a few milliseconds of CPU each, so one P has room to spare; on this
// workload it costs about 11 % less CPU a message at the same latency (docs/deploy.md,
// "CPU"). MCP servers are processes of their own, a request waiting on the network or the
// disk holds no P, and the runtime preempts a long computation (a compaction, a backup's
// copy) every 10 ms, so the loop keeps its turn. The environment's GOMAXPROCS, when set,
// is left as it is.
func oneProc() int {
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	runtime.GOMAXPROCS(1)
	return 1
}
