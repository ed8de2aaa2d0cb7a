package loop

import (
	"time"

	"github.com/anima-bot/anima/brain"
)

// The reply latency is measured from an update's arrival (Signal.Received, stamped by the
// channel that recorded it) to the delivery of the first part of its reply. The arrival
// rides on the first outbox message of the reply (SendMessage.Arrived), so it is stored
// with it and survives a restart and any number of retries.

// arrival is when the earliest of sigs arrived, or zero when none has a known arrival. A
// schedule_due signal without Received counts from At: the scheduler records it at At. A
// reaction is not answered: a run only carries it.
func arrival(sigs []brain.Signal) time.Time {
	var first time.Time
	for _, s := range sigs {
		if s.Type == brain.SignalReaction {
			continue
		}
		at := s.Received
		if at.IsZero() && s.Type == brain.SignalScheduleDue {
			at = s.At
		}
		if !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// stampArrival marks the first of a reply's messages with the arrival of the updates it
// answers (the earliest of them).
func stampArrival(msgs []brain.SendMessage, sigs ...brain.Signal) {
	if len(msgs) == 0 || !msgs[0].Arrived.IsZero() {
		return
	}
	msgs[0].Arrived = arrival(sigs)
}

// observeLatency records the reply latency of m, delivered (its first part at least) at
// at; messages without an arrival are not replies to an update and are not measured.
func (m *loopMetrics) observeLatency(msg brain.SendMessage, at time.Time) {
	if msg.Arrived.IsZero() {
		return
	}
	m.replyLatency.WithLabelValues(string(msg.Kind)).Observe(max(at.Sub(msg.Arrived), 0).Seconds())
}
