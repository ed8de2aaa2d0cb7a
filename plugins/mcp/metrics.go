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
