package mcp

import (
	"context"
	"runtime"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// spawned is a stdio server's CommandTransport that starts the child on an OS thread of
// its own, locked until the child has ended, and records the child's process group. On
// Linux the child dies with its parent (dieWithParent), and the kernel takes for its
// parent the thread that forked it, not the process: forked from an ordinary goroutine,
// it would be killed whenever the Go runtime ends that thread (it does when a goroutine
// that locked its thread returns without unlocking it), and the server would go down
// with no reason in its log. The locked thread costs one idle OS thread per server.
type spawned struct {
	*mcp.CommandTransport
	procs   *procFile
	release chan struct{}
	once    sync.Once
	pid     int // the child's, once started
}

// track wraps t, if it runs a command, so that its child starts from a thread of its own
// and its group is recorded in m.procs; the stop it returns ends the child's group and
// forgets it. An HTTP transport and its stop are returned as they are.
func (m *Manager) track(t mcp.Transport, stop func()) (mcp.Transport, func()) {
	ct, ok := t.(*mcp.CommandTransport)
	if !ok {
		return t, stop
	}
	sp := &spawned{CommandTransport: ct, procs: m.procs, release: make(chan struct{})}
	return sp, func() {
		stop()
		sp.end()
	}
}

// Connect starts the child from a locked thread that stays until end.
func (t *spawned) Connect(ctx context.Context) (mcp.Connection, error) {
	type started struct {
		conn mcp.Connection
		err  error
	}
	res := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		conn, err := t.CommandTransport.Connect(ctx)
		res <- started{conn, err}
		if err == nil {
			<-t.release // the thread stays the child's parent until the child has ended
		}
	}()
	r := <-res
	if r.err == nil {
		t.pid = t.Command.Process.Pid
		t.procs.add(t.pid)
	}
	return r.conn, r.err
}

// end lets the thread go and forgets the child's group, which the caller has ended.
func (t *spawned) end() {
	t.once.Do(func() {
		close(t.release)
		if t.pid != 0 {
			t.procs.remove(t.pid)
		}
	})
}
