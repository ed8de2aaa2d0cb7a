package mcp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// settling tells when every server's first start has ended: up with its tools published,
// or down with the reason. It is what the start-up waits for before it counts as over.
type settling struct {
	left atomic.Int64
	done chan struct{}
}

func newSettling(servers int) *settling {
	s := &settling{done: make(chan struct{})}
	s.left.Store(int64(servers))
	if servers == 0 {
		close(s.done)
	}
	return s
}

// settle counts one server's first start as ended; once is that server's, so a later
// restart never counts again.
func (s *settling) settle(once *sync.Once) {
	once.Do(func() {
		if s.left.Add(-1) == 0 {
			close(s.done)
		}
	})
}

// Settled is closed once every server's first start has ended (up with its tools
// published, or down), at once when no server is configured. A server that keeps failing
// counts as settled after its first failure.
func (m *Manager) Settled() <-chan struct{} { return m.settling.done }

// AwaitTools returns once every server's first start has ended (Settled), at most its
// bound after Run began (each server's first start takes at most its timeout to connect
// and its timeout to list), or when ctx ends: a run that may offer tools calls it first, so
// a message that arrives while a server is still listing is not answered without that
// server's tools. It returns at once when every server has settled, or none is configured.
func (m *Manager) AwaitTools(ctx context.Context) {
	select {
	case <-m.settling.done:
		return
	default:
	}
	wait := m.settleBound
	if began := m.began.Load(); began != nil {
		wait = time.Until(began.Add(m.settleBound))
	}
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-m.settling.done:
	case <-t.C:
	case <-ctx.Done():
	}
}
