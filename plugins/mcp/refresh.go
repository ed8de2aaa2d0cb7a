package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// summaryEvery is how often the refreshes a server's tools/list_changed caused are
// summed up in one log line.
const summaryEvery = time.Minute

// coalescer turns tools/list_changed notifications into refreshes that start at least
// every apart; a notification is always followed by a refresh that starts after it, so
// the last listing wins however fast they come.
type coalescer struct {
	every time.Duration
	last  time.Time   // when the last refresh started
	timer *time.Timer // the due refresh; nil when none is due
}

// notified makes a refresh due at last+every (at once if that is past), unless one is
// due already: it will list the tools as they are then.
func (c *coalescer) notified(now time.Time) {
	if c.timer == nil {
		c.timer = time.NewTimer(max(0, c.last.Add(c.every).Sub(now)))
	}
}

// due is the channel the due refresh fires on, nil (never ready) when none is due.
func (c *coalescer) due() <-chan time.Time {
	if c.timer == nil {
		return nil
	}
	return c.timer.C
}

// started records that a refresh started at now.
func (c *coalescer) started(now time.Time) { c.timer, c.last = nil, now }

// stop releases the due refresh's timer.
func (c *coalescer) stop() {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// report is what one refresh offered and refused.
type report struct {
	offered int
	refused []refusal // each examined tool not offered, and why
	over    int       // tools past limits.tools
	stopped string    // why the listing did not follow nextCursor
}

// refresh lists the server's tools within its limits, hands them to the sink and keeps
// their metric series (deleting those of withdrawn tools). The session's first listing
// (first) is logged, its refusals before the tools are offered; the later ones are for
// the caller to sum up.
func (s *server) refresh(ctx context.Context, sess *mcp.ClientSession, first bool) (report, error) {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	lst, err := s.listTools(lctx, sess)
	if err != nil {
		return report{}, err
	}
	tools, refused := s.adapt(lst.tools)
	r := report{offered: len(tools), refused: append(lst.refused, refused...), over: lst.over, stopped: lst.stopped}
	if first {
		s.logRefused(r, 0)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.(*tool).name
	}
	s.setSeries(names)
	if first {
		// Up once its first listing is in, just before its tools are offered: whoever saw
		// the tools finds it up, and whoever saw it up finds them offered a few
		// microseconds later (up at the session's start left a listing's time between).
		s.mgr.m.up.WithLabelValues(s.cfg.Name).Set(1)
	}
	if s.mgr.sink != nil {
		n := len(r.refused)
		for _, err := range s.mgr.sink.SetTools(groupName(s.cfg.Name), tools) {
			r.refused = append(r.refused, refusal{why: err.Error()})
			r.offered--
		}
		if first {
			s.logRefused(report{refused: r.refused}, n)
		}
	}
	s.mu.Lock()
	s.ntools = r.offered
	s.mu.Unlock()
	if first {
		s.log.Info("mcp server up", "tools", r.offered)
	}
	return r, nil
}

// refusalLines is how many refused tools a session's first listing logs one by one;
// one more line counts the rest (`anima mcp list` shows every one).
const refusalLines = 8

// logRefused logs r's refusals from the from-th on, as far as refusalLines and a count
// of the rest, one line for the tools past the limit and one for a listing cut short: a
// first listing logs at most refusalLines+4 lines, whatever the server lists.
func (s *server) logRefused(r report, from int) {
	for i := from; i < len(r.refused); i++ {
		x := r.refused[i]
		switch {
		case i == refusalLines:
			s.log.Warn("mcp tools not offered besides those logged; anima mcp list shows why", "more", len(r.refused)-i)
		case i > refusalLines:
		case x.tool == "":
			s.log.Warn("mcp tool not offered", "why", x.why)
		default:
			s.log.Warn("mcp tool not offered", "tool", x.tool, "why", x.why)
		}
	}
	if r.over > 0 {
		s.log.Warn("mcp tools past the server's limit not offered", "limit", s.cfg.Limits.Tools, "refused", r.over)
	}
	if r.stopped != "" {
		s.log.Warn("mcp tool listing cut short; the tools listed so far are taken", "why", r.stopped)
	}
}

// summary sums up the refreshes on tools/list_changed between two log lines.
type summary struct {
	refreshes int
	last      report
}

// log writes the summary's line, if there were refreshes, and starts a new one.
func (m *summary) log(l *slog.Logger) {
	if m.refreshes == 0 {
		return
	}
	attrs := []any{"refreshes", m.refreshes, "tools", m.last.offered, "refused", len(m.last.refused) + m.last.over}
	if m.last.stopped != "" {
		attrs = append(attrs, "cut_short", m.last.stopped)
	}
	l.Info(fmt.Sprintf("mcp tools refreshed on tools/list_changed in the last %s", summaryEvery), attrs...)
	*m = summary{}
}
