package memory

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/metric"
)

type metrics struct {
	summaries     *prometheus.CounterVec
	searchSeconds prometheus.Histogram
	embedRequests *prometheus.CounterVec
	embedTokens   *prometheus.CounterVec
	embedSeconds  *prometheus.HistogramVec
	embedTurns    prometheus.Counter
}

// newMetrics builds the package's metrics on reg; a nil reg leaves them unregistered.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := metric.With(reg)
	return &metrics{
		summaries: f.CounterVec("anima_memory_summaries_total", "Summaries folded by Maintain, by result (ok, error).", "result"),
		searchSeconds: f.Histogram("anima_memory_search_seconds",
			"Time spent in memory search.", prometheus.ExponentialBuckets(0.0001, 4, 8)),
		embedRequests: f.CounterVec("anima_memory_embedding_requests_total",
			"Embedding requests, by purpose (turns, query) and result (ok, error, timeout, refused).", "purpose", "result"),
		embedTokens: f.CounterVec("anima_memory_embedding_tokens_total",
			"Tokens the embeddings endpoint counted, by purpose (turns, query).", "purpose"),
		embedSeconds: f.HistogramVec("anima_memory_embedding_seconds",
			"Time an embedding request took, by purpose (turns, query).", prometheus.ExponentialBuckets(0.005, 3, 8), "purpose"),
		embedTurns: f.Counter("anima_memory_embedding_turns_total", "Turns whose vectors were stored."),
	}
}
