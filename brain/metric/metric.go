// Package metric is how a package that measures declares its Prometheus metrics: one call
// a metric, with its name, its help, its labels (and a histogram's buckets), registered on
// the prometheus.Registerer the package was given. Each package keeps its own metrics.go;
// this holds only what every one of them wrote out again: the options struct of each kind,
// and the label values that start at 0.
package metric

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Factory builds metrics on one Registerer. Registering a name twice panics, as with
// promauto; a Factory on a nil Registerer builds working metrics that nothing gathers.
type Factory struct{ f promauto.Factory }

// With returns the Factory that registers on reg (nil: on none).
func With(reg prometheus.Registerer) Factory { return Factory{f: promauto.With(reg)} }

// Counter is a counter without labels.
func (f Factory) Counter(name, help string) prometheus.Counter {
	return f.f.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// CounterVec is a counter by labels.
func (f Factory) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return f.f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Gauge is a gauge without labels.
func (f Factory) Gauge(name, help string) prometheus.Gauge {
	return f.f.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// Histogram is a histogram without labels, with the buckets' upper bounds.
func (f Factory) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return f.f.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
}

// HistogramVec is a histogram by labels, with the buckets' upper bounds.
func (f Factory) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return f.f.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// Known starts vec's series for each of values (of its one label) at 0, so that rates and
// dashboards see them before the first event, and returns vec.
func Known(vec *prometheus.CounterVec, values ...string) *prometheus.CounterVec {
	for _, v := range values {
		vec.WithLabelValues(v)
	}
	return vec
}
