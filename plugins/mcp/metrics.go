package mcp

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Call outcomes, the outcome label of anima_mcp_calls_total.
const (
	outcomeOK          = "ok"          // the tool answered
	outcomeToolError   = "tool_error"  // the tool answered with isError
	outcomeTimeout     = "timeout"     // no answer within the server's timeout
	outcomeFailed      = "failed"      // the call failed in transport (the server died mid-call)
	outcomeUnavailable = "unavailable" // the server was down when called
	outcomeBadArgs     = "bad_args"    // arguments that are not a JSON object
)

type metrics struct {
	calls    *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	up       *prometheus.GaugeVec
	restarts *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		calls: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_mcp_calls_total",
			Help: "MCP tool calls, by server, tool and outcome (ok, tool_error, timeout, failed, unavailable, bad_args)."},
			[]string{"server", "tool", "outcome"}),
		seconds: f.NewHistogramVec(prometheus.HistogramOpts{Name: "anima_mcp_call_seconds",
			Help: "Time an MCP tool call took, by server.", Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30}},
			[]string{"server"}),
		up: f.NewGaugeVec(prometheus.GaugeOpts{Name: "anima_mcp_server_up",
			Help: "1 while an MCP server's session is up and its tools are offered, else 0."}, []string{"server"}),
		restarts: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_mcp_server_restarts_total",
			Help: "Times an MCP server was restarted after it failed to start or died."}, []string{"server"}),
	}
}

// withdrawn is the tool label of a call to a tool no longer in its server's listing (the
// model was offered it before a refresh withdrew it), so that a server renaming its tools
// adds no series.
const withdrawn = "(withdrawn)"

// count adds one to anima_mcp_calls_total for a call of tool name. The tool label takes
// only names of the server's current listing (at most limits.tools), under s.mu so that
// a refresh deleting a withdrawn tool's series cannot race a call bringing it back.
func (s *server) count(name, outcome string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.series[name] {
		name = withdrawn
	}
	s.mgr.m.calls.WithLabelValues(s.cfg.Name, name, outcome).Inc()
}

// setSeries makes names the tools with series of their own: the series of a tool not
// among them are deleted, and each of them has its ok series from now, at 0 if new.
func (s *server) setSeries(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]bool, len(names))
	for _, n := range names {
		next[n] = true
		s.mgr.m.calls.WithLabelValues(s.cfg.Name, n, outcomeOK)
	}
	for n := range s.series {
		if !next[n] {
			s.mgr.m.calls.DeletePartialMatch(prometheus.Labels{"server": s.cfg.Name, "tool": n})
		}
	}
	s.series = next
}
