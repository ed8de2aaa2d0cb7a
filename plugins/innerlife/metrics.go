package innerlife

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

type metrics struct {
	opened, closed prometheus.Counter
	asked          *prometheus.CounterVec
	entries        *prometheus.CounterVec
	dreams         *prometheus.CounterVec
	dreamRequests  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	return &metrics{
		opened: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_concerns_opened_total", Help: "Concerns opened."}),
		closed: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_concerns_closed_total", Help: "Concerns closed."}),
		asked: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_checkins_asked_total",
			Help: "Check-ins carried by a run, by how: proactive (anima wrote first) or chat (the user wrote first)."}, []string{"how"}),
		entries: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_journal_entries_total",
			Help: "Private journal entries written, by kind."}, []string{"kind"}),
		dreams: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_dreams_total",
			Help: "Dream runs, by outcome (ok, error, skipped_quiet)."}, []string{"outcome"}),
		dreamRequests: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_dream_model_requests_total",
			Help: "Model requests made by dream runs."}),
	}
}

// registerSalience registers anima_innerlife_concerns{salience}, counted when scraped.
func registerSalience(reg prometheus.Registerer, count func(Salience) int) {
	f := promauto.With(reg)
	for s := Active; s < salienceCount; s++ {
		f.NewGaugeFunc(prometheus.GaugeOpts{Name: "anima_innerlife_concerns", Help: "Open concerns, by salience.",
			ConstLabels: prometheus.Labels{"salience": s.String()}}, func() float64 { return float64(count(s)) })
	}
}
