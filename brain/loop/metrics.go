package loop

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/anima-bot/anima/brain"
)

// stepMetrics are the Stepper's: what it sees and what it wakes.
type stepMetrics struct {
	signals          *prometheus.CounterVec
	wakes            *prometheus.CounterVec
	reactionsDropped prometheus.Counter
	known            map[brain.SignalType]prometheus.Counter
}

func newStepMetrics(reg prometheus.Registerer) *stepMetrics {
	f := promauto.With(reg)
	m := &stepMetrics{
		signals: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_signals_total",
			Help: "Signals seen by the core loop, by type."}, []string{"type"}),
		wakes: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_cognition_wakes_total",
			Help: "Cognition wakes, by reason."}, []string{"reason"}),
		reactionsDropped: f.NewCounter(prometheus.CounterOpts{Name: "anima_reactions_dropped_total",
			Help: "Reactions consumed unread: superseded by a chat's later ones beyond the pending cap, or in a chat forgotten or without a relationship."}),
		known: map[brain.SignalType]prometheus.Counter{},
	}
	// Known label values start at 0, so rates and dashboards see them before the first event.
	for _, r := range []string{brain.ReasonUserMessage, brain.ReasonSchedule, brain.ReasonThought, brain.ReasonProactive, brain.ReasonFollowup, brain.ReasonConcernCheckin} {
		m.wakes.WithLabelValues(r)
	}
	for _, t := range []brain.SignalType{brain.SignalUserMessage, brain.SignalCommand, brain.SignalReaction, brain.SignalScheduleDue, brain.SignalThought,
		brain.SignalTimeOfDay, brain.SignalAlertness, brain.SignalEnergy, brain.SignalSocialPressure, brain.SignalThoughtPressure} {
		m.known[t] = m.signals.WithLabelValues(string(t))
	}
	return m
}

// signal counts a signal without allocating for the known types.
func (m *stepMetrics) signal(t brain.SignalType) {
	if c, ok := m.known[t]; ok {
		c.Inc()
		return
	}
	m.signals.WithLabelValues(string(t)).Inc()
}

// loopMetrics are the Loop's: ticks, runs, deliveries and intents.
type loopMetrics struct {
	ticks            prometheus.Counter
	sent             *prometheus.CounterVec
	proactive        *prometheus.CounterVec
	outboxPending    prometheus.Gauge
	folded           prometheus.Counter
	panics           prometheus.Counter
	sendFailures     prometheus.Counter
	intentsUnhandled *prometheus.CounterVec
	replyLatency     *prometheus.HistogramVec
	deadLetters      *prometheus.CounterVec
	deadDropped      prometheus.Counter
}

func newLoopMetrics(reg prometheus.Registerer) *loopMetrics {
	f := promauto.With(reg)
	m := &loopMetrics{
		ticks: f.NewCounter(prometheus.CounterOpts{Name: "anima_ticks_total",
			Help: "Core loop ticks."}),
		sent: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_messages_sent_total",
			Help: "Messages delivered, by kind."}, []string{"kind"}),
		proactive: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_proactive_total",
			Help: "Proactive runs by outcome: sent, silent (the model chose to say nothing), duplicate (suppressed as a repeat)."}, []string{"outcome"}),
		outboxPending: f.NewGauge(prometheus.GaugeOpts{Name: "anima_outbox_pending",
			Help: "Messages written to the outbox and not yet delivered."}),
		folded: f.NewCounter(prometheus.CounterOpts{Name: "anima_wakes_folded_total",
			Help: "Wakes folded into a queued run for the same chat."}),
		panics: f.NewCounter(prometheus.CounterOpts{Name: "anima_chat_job_panics_total",
			Help: "Chat jobs that panicked (recovered)."}),
		sendFailures: f.NewCounter(prometheus.CounterOpts{Name: "anima_send_failures_total",
			Help: "Deliveries that failed and stayed in the outbox."}),
		intentsUnhandled: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_intents_unhandled_total",
			Help: "Intents of a kind nobody applies (dropped), by intent name."}, []string{"intent"}),
		replyLatency: f.NewHistogramVec(prometheus.HistogramOpts{Name: "anima_reply_latency_seconds",
			Help:    "From an update's arrival to the delivery of the first part of its reply, by message kind.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}}, []string{"kind"}),
		deadLetters: f.NewCounterVec(prometheus.CounterOpts{Name: "anima_dead_letters_total",
			Help: "Work that failed for good and was kept as a dead letter, by kind: undeliverable, run_failed, hold_expired."}, []string{"kind"}),
		deadDropped: f.NewCounter(prometheus.CounterOpts{Name: "anima_dead_letters_dropped_total",
			Help: "Older dead letters deleted to keep a user's or a chat's within the cap (storage.dead_letters)."}),
	}
	// Known label values start at 0, so rates and dashboards see them before the first event.
	for _, k := range []brain.MessageKind{brain.KindReply, brain.KindProactive, brain.KindFollowup, brain.KindReminder, brain.KindSystem} {
		m.sent.WithLabelValues(string(k))
	}
	// The kinds that answer an update (a proactive message answers none).
	for _, k := range []brain.MessageKind{brain.KindReply, brain.KindFollowup, brain.KindReminder, brain.KindSystem} {
		m.replyLatency.WithLabelValues(string(k))
	}
	for _, k := range []brain.DeadKind{brain.DeadUndeliverable, brain.DeadRunFailed, brain.DeadHoldExpired} {
		m.deadLetters.WithLabelValues(string(k))
	}
	for _, o := range []string{"sent", "silent", "duplicate"} {
		m.proactive.WithLabelValues(o)
	}
	return m
}
