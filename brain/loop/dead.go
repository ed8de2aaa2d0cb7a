package loop

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

// bury keeps d (when the loop has DeadLetters) and counts it, and the older letters it
// pushed out.
func (l *Loop) bury(d brain.DeadLetter) {
	l.m.deadLetters.WithLabelValues(string(d.Kind)).Inc()
	if l.deps.DeadLetters == nil {
		return
	}
	dropped, err := l.deps.DeadLetters.Bury(d)
	if err != nil {
		l.log.Error("keep dead letter", "kind", d.Kind, "chat", d.Chat, "err", err)
		return
	}
	if dropped > 0 {
		l.m.deadDropped.Add(float64(dropped))
		l.log.Debug("oldest dead letters dropped over the cap", "kind", d.Kind, "chat", d.Chat, "dropped", dropped)
	}
}

// Redeliver queues outbox entries for delivery while the loop runs (a dead letter put
// back in the outbox); before Run, use Deliver. It returns ctx's error if ctx ends before
// the loop takes them.
func (l *Loop) Redeliver(ctx context.Context, entries []brain.Outgoing) error {
	if len(entries) == 0 {
		return nil
	}
	return hand(ctx, l.redeliver, entries)
}

// recorded returns the signals of sigs that an operator can retry: all of them but
// in-memory ones (neuron output), which were never recorded.
func recorded(sigs []brain.Signal) []brain.Signal {
	var out []brain.Signal
	for _, s := range sigs {
		if s.ID != 0 {
			out = append(out, s)
		}
	}
	return out
}
