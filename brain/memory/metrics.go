package memory

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

type metrics struct {
	summaries     *prometheus.CounterVec
	searchSeconds prometheus.Histogram
}

// newMetrics builds the package's metrics on reg; a nil reg leaves them unregistered.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		summaries: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_memory_summaries_total",
			Help: "Summaries folded by Maintain, by result (ok, error).",
		}, []string{"result"}),
		searchSeconds: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "anima_memory_search_seconds",
			Help:    "Time spent in memory search.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 8),
		}),
	}
}
