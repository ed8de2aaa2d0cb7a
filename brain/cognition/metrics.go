package cognition

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Outcomes of one LLM request (the outcome label of anima_llm_requests_total).
const (
	outcomeOK          = "ok"
	outcomeError       = "error"
	outcomeTimeout     = "timeout"
	outcomeRateLimited = "rate_limited"
	outcomeServerError = "server_error"
)

// metrics are the cognition layer's Prometheus metrics. Labels stay low-cardinality: model
// names come from config and tool names from the registry ("unknown" for anything else).
type metrics struct {
	requests     *prometheus.CounterVec
	tokens       *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	runs         *prometheus.CounterVec
	escalations  prometheus.Counter
	smartRetries prometheus.Counter
	toolCalls    *prometheus.CounterVec
	toolsDropped *prometheus.CounterVec
	breakerOpen  prometheus.Gauge
	// streamFallbacks counts streams the endpoint refused (answered whole instead).
	streamFallbacks prometheus.Counter
	// formatFallbacks counts models whose endpoint refused response_format.
	formatFallbacks prometheus.Counter
	breakerSince    prometheus.Gauge
}

// newMetrics builds the metrics on reg; a nil reg leaves them unregistered (a no-op for
// the rest of the program).
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_llm_requests_total",
			Help: "LLM chat completion requests by model and outcome (ok, error, timeout, rate_limited, server_error).",
		}, []string{"model", "outcome"}),
		tokens: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_llm_tokens_total",
			Help: "LLM tokens reported by the provider, by model and kind (prompt, completion).",
		}, []string{"model", "kind"}),
		duration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "anima_llm_request_duration_seconds",
			Help:    "Duration of LLM chat completion requests.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
		}, []string{"model"}),
		runs: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_cognition_runs_total",
			Help: "Cognition runs by profile and outcome (sent, silent, error, unavailable, budget).",
		}, []string{"profile", "outcome"}),
		escalations: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_cognition_escalations_total",
			Help: "Runs the fast model escalated to the smart model with core_escalate.",
		}),
		smartRetries: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_cognition_smart_retries_total",
			Help: "Low-confidence fast answers retried on the smart model.",
		}),
		toolCalls: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_cognition_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, error, bad_args, unknown, refused).",
		}, []string{"tool", "outcome"}),
		toolsDropped: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_cognition_tools_dropped_total",
			Help: "External tools (an MCP server's) left out of a run because all external tool definitions together were over their share of the prompt budget, by profile.",
		}, []string{"profile"}),
		breakerOpen: f.NewGauge(prometheus.GaugeOpts{
			Name: "anima_cognition_breaker_open",
			Help: "1 while the LLM circuit breaker is open (requests fail fast), else 0.",
		}),
		streamFallbacks: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_llm_stream_fallbacks_total",
			Help: "Streamed requests the endpoint refused, asked again without streaming (streaming then stays off for a while).",
		}),
		formatFallbacks: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_llm_format_fallbacks_total",
			Help: "Models whose endpoint refused the answer's response_format (json_schema); their answers are read from plain text from then on.",
		}),
		breakerSince: f.NewGauge(prometheus.GaugeOpts{
			Name: "anima_cognition_breaker_open_since_seconds",
			Help: "Unix time the LLM circuit breaker opened (the model unreachable since then); 0 while it is closed.",
		}),
	}
}
