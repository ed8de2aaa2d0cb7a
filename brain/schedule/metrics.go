package schedule

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

type metrics struct {
	fired   *prometheus.CounterVec
	pending prometheus.Gauge
}

// newMetrics builds the package's metrics on reg; a nil reg leaves them unregistered.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		fired: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_schedules_fired_total",
			Help: "Schedule items fired, by message kind (reminder, followup).",
		}, []string{"kind"}),
		pending: f.NewGauge(prometheus.GaugeOpts{
			Name: "anima_schedules_pending",
			Help: "Schedule items waiting to fire.",
		}),
	}
}
