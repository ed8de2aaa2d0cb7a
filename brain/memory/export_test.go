package memory

import "github.com/prometheus/client_golang/prometheus"

// MetricsSummaries exposes the summaries counter to the tests.
func (m *Memory) MetricsSummaries(result string) prometheus.Counter {
	return m.metrics.summaries.WithLabelValues(result)
}
