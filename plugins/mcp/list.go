package mcp

import (
	"context"
	"fmt"
	"sync"
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
	lst, err := s.listTools(lctx, sess)
	if err != nil {
		l.Err = redact(err)
		return l
	}
	tools, refused := s.adapt(lst.tools)
	offered := map[string]string{}
	for _, t := range tools {
		offered[t.(*tool).name] = t.Spec().Name
	}
	why := map[string]string{}
	for _, r := range refused {
		why[r.tool] = r.why
	}
	for _, t := range lst.tools {
		l.Tools = append(l.Tools, Listed{Name: t.Name, Offered: offered[t.Name], Description: t.Description, Why: why[t.Name]})
	}
	for _, r := range lst.refused {
		l.Tools = append(l.Tools, Listed{Name: r.tool, Why: r.why})
	}
	for _, n := range lst.excluded {
		l.Tools = append(l.Tools, Listed{Name: n, Why: "not in the tools allow-list"})
	}
	if lst.over > 0 {
		l.Tools = append(l.Tools, Listed{Name: fmt.Sprintf("(%d more)", lst.over),
			Why: fmt.Sprintf("past limits.tools (%d)", s.cfg.Limits.Tools)})
	}
	if lst.stopped != "" {
		l.Tools = append(l.Tools, Listed{Name: "(the rest of the listing)", Why: "not read: " + lst.stopped})
	}
	return l
}
