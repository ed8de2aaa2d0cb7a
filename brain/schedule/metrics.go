package schedule

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/metric"
)

type metrics struct {
	fired   *prometheus.CounterVec
	pending prometheus.Gauge
}

// newMetrics builds the package's metrics on reg; a nil reg leaves them unregistered.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := metric.With(reg)
	return &metrics{
		fired:   f.CounterVec("anima_schedules_fired_total", "Schedule items fired, by message kind (reminder, followup).", "kind"),
		pending: f.Gauge("anima_schedules_pending", "Schedule items waiting to fire."),
	}
}
