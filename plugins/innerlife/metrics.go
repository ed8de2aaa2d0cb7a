package innerlife

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

type metrics struct {
	opened, closed prometheus.Counter
	asked          *prometheus.CounterVec
	raised         [2]prometheus.Counter // first, again
	entries        *prometheus.CounterVec
	folded         prometheus.Counter
	dreams         *prometheus.CounterVec
	dreamRequests  prometheus.Counter
	dreamRun       prometheus.Histogram
}

// Dream outcomes, the outcome label of anima_innerlife_dreams_total.
const (
	dreamOK      = "ok"
	dreamError   = "error"
	dreamSkipped = "skipped_quiet"
)

func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	m := &metrics{
		opened: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_concerns_opened_total", Help: "Concerns opened."}),
		closed: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_concerns_closed_total", Help: "Concerns closed."}),
		asked: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_checkins_asked_total",
			Help: "Check-ins carried by a committed run, by how: proactive (anima wrote first; a run that chose silence counts too) or chat (the user wrote first)."}, []string{"how"}),
		entries: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_journal_entries_total",
			Help: "Private journal entries written, by kind."}, []string{"kind"}),
		folded: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_journal_folded_total",
			Help: "Journal entries older than a week that dreams folded into reflections."}),
		dreams: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_dreams_total",
			Help: "Dream runs, by outcome (ok, error, skipped_quiet)."}, []string{"outcome"}),
		dreamRequests: f.NewCounter(prometheus.CounterOpts{Name: "anima_innerlife_dream_model_requests_total",
			Help: "Model requests made by dream runs."}),
		dreamRun: f.NewHistogram(prometheus.HistogramOpts{Name: "anima_innerlife_dream_run_requests",
			Help: "Model requests per dream run (at most 3).", Buckets: []float64{0, 1, 2, 3}}),
	}
	raised := f.NewCounterVec(prometheus.CounterOpts{Name: "anima_innerlife_checkins_raised_total",
		Help: "Due check-ins raised as thought pressure, by attempt: first, or again (the run that carried it failed)."}, []string{"attempt"})
	m.raised = [2]prometheus.Counter{raised.WithLabelValues("first"), raised.WithLabelValues("again")}
	// Every series exists from the start, so the dashboard shows zeros rather than nothing.
	for _, how := range []string{"proactive", "chat"} {
		m.asked.WithLabelValues(how)
	}
	for _, k := range entryKinds {
		m.entries.WithLabelValues(k)
	}
	for _, o := range []string{dreamOK, dreamError, dreamSkipped} {
		m.dreams.WithLabelValues(o)
	}
	return m
}

// registerSalience registers anima_innerlife_concerns{salience}, counted when scraped.
func registerSalience(reg prometheus.Registerer, count func(Salience) int) {
	f := promauto.With(reg)
	for s := Active; s < salienceCount; s++ {
		f.NewGaugeFunc(prometheus.GaugeOpts{Name: "anima_innerlife_concerns", Help: "Open concerns, by salience.",
			ConstLabels: prometheus.Labels{"salience": s.String()}}, func() float64 { return float64(count(s)) })
	}
}
