package schedule

import "github.com/prometheus/client_golang/prometheus"

// MetricsPending exposes the pending gauge to the tests.
func (s *Scheduler) MetricsPending() prometheus.Gauge { return s.metrics.pending }

// MetricsFired exposes the fired counter of kind to the tests.
func (s *Scheduler) MetricsFired(kind string) prometheus.Counter {
	return s.metrics.fired.WithLabelValues(kind)
}
