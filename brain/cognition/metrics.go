package cognition

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/metric"
)

// Outcomes of one LLM request (the outcome label of anima_llm_requests_total).
const (
	outcomeOK = "ok"
	// the failures' outcomes are provider.Classify's classes
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
	// Perception: files by kind and outcome, and transcriptions.
	media         *prometheus.CounterVec
	transcription prometheus.Histogram
	transcribed   prometheus.Counter
}

// newMetrics builds the metrics on reg; a nil reg leaves them unregistered (a no-op for
// the rest of the program).
func newMetrics(reg prometheus.Registerer) *metrics {
	f := metric.With(reg)
	return &metrics{
		requests: f.CounterVec("anima_llm_requests_total",
			"LLM chat completion requests by model and outcome (ok, error, timeout, rate_limited, server_error).", "model", "outcome"),
		tokens: f.CounterVec("anima_llm_tokens_total",
			"LLM tokens reported by the provider, by model and kind (prompt, completion).", "model", "kind"),
		duration: f.HistogramVec("anima_llm_request_duration_seconds",
			"Duration of LLM chat completion requests.", []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}, "model"),
		runs: f.CounterVec("anima_cognition_runs_total",
			"Cognition runs by profile and outcome (sent, silent, error, unavailable, budget).", "profile", "outcome"),
		escalations: f.Counter("anima_cognition_escalations_total",
			"Runs the fast model escalated to the smart model with core_escalate."),
		smartRetries: f.Counter("anima_cognition_smart_retries_total",
			"Low-confidence fast answers retried on the smart model."),
		toolCalls: f.CounterVec("anima_cognition_tool_calls_total",
			"Tool calls by tool and outcome (ok, error, bad_args, unknown, refused).", "tool", "outcome"),
		toolsDropped: f.CounterVec("anima_cognition_tools_dropped_total",
			"External tools (an MCP server's) left out of a run because all external tool definitions together were over their share of the prompt budget, by profile.", "profile"),
		breakerOpen: f.Gauge("anima_cognition_breaker_open",
			"1 while the LLM circuit breaker is open (requests fail fast), else 0."),
		streamFallbacks: f.Counter("anima_llm_stream_fallbacks_total",
			"Streamed requests the endpoint refused, asked again without streaming (streaming then stays off for a while)."),
		formatFallbacks: f.Counter("anima_llm_format_fallbacks_total",
			"Models whose endpoint refused the answer's response_format (json_schema); their answers are read from plain text from then on."),
		breakerSince: f.Gauge("anima_cognition_breaker_open_since_seconds",
			"Unix time the LLM circuit breaker opened (the model unreachable since then); 0 while it is closed."),
		media: f.CounterVec("anima_media_total",
			"Files in user messages by kind (voice, audio, video_note, photo, document) and outcome (ok, refused, disabled, failed, limited).", "kind", "outcome"),
		transcription: f.Histogram("anima_media_transcription_seconds",
			"Duration of successful transcription requests.", []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}),
		transcribed: f.Counter("anima_media_audio_seconds_total", "Seconds of audio transcribed."),
	}
}
