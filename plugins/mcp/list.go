package mcp

import (
	"context"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Listing is what List found on one server.
type Listing struct {
	Server string
	Err    error // the server could not be started or listed
	Tools  []Listed
}

// Listed is one of a server's tools: the name it is offered under, or why it is not.
type Listed struct {
	Name        string // the server's own name
	Offered     string // <server>_<tool>; "" when not offered
	Description string
	Why         string // why it is not offered
}

// List starts every server concurrently, lists its tools as they would be offered, and
// stops it (`anima mcp list`). Servers are in configuration order.
func (m *Manager) List(ctx context.Context) []Listing {
	out := make([]Listing, len(m.servers))
	var wg sync.WaitGroup
	for i, s := range m.servers {
		wg.Go(func() { out[i] = s.list(ctx) })
	}
	wg.Wait()
	return out
}

func (s *server) list(ctx context.Context) Listing {
	l := Listing{Server: s.cfg.Name}
	sess, stop, err := s.connect(ctx)
	if err != nil {
		l.Err = redact(err)
		return l
	}
	defer stop()
	lctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var listed []*mcp.Tool
	for t, err := range sess.Tools(lctx, nil) {
		if err != nil {
			l.Err = redact(err)
			return l
		}
		listed = append(listed, t)
	}
	offered := map[string]string{}
	for _, t := range s.adapt(listed) {
		offered[t.(*tool).name] = t.Spec().Name
	}
	for _, t := range listed {
		e := Listed{Name: t.Name, Offered: offered[t.Name], Description: t.Description}
		switch {
		case e.Offered != "":
		case len(s.cfg.Tools) > 0 && !slices.Contains(s.cfg.Tools, t.Name):
			e.Why = "not in the tools allow-list"
		default:
			if _, _, err := strictSchema(t.InputSchema); err != nil {
				e.Why = err.Error()
			} else {
				e.Why = "its name collides with another tool's"
			}
		}
		l.Tools = append(l.Tools, e)
	}
	return l
}
