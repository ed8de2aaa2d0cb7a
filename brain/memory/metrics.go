package memory

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/metric"
)

type metrics struct {
	summaries     *prometheus.CounterVec
	searchSeconds prometheus.Histogram
}

// newMetrics builds the package's metrics on reg; a nil reg leaves them unregistered.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := metric.With(reg)
	return &metrics{
		summaries: f.CounterVec("anima_memory_summaries_total", "Summaries folded by Maintain, by result (ok, error).", "result"),
		searchSeconds: f.Histogram("anima_memory_search_seconds",
			"Time spent in memory search.", prometheus.ExponentialBuckets(0.0001, 4, 8)),
	}
}
