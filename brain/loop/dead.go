package loop

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

// DeadLetters keeps work that failed for good (implemented over storage). Bury returns
// the store's error; the work is dropped all the same.
type DeadLetters interface {
	Bury(d brain.DeadLetter) error
}

// bury keeps d (when the loop has DeadLetters) and counts it.
func (l *Loop) bury(d brain.DeadLetter) {
	l.m.deadLetters.WithLabelValues(string(d.Kind)).Inc()
	if l.deps.DeadLetters == nil {
		return
	}
	if err := l.deps.DeadLetters.Bury(d); err != nil {
		l.log.Error("keep dead letter", "kind", d.Kind, "chat", d.Chat, "err", err)
	}
}

// Redeliver queues outbox entries for delivery while the loop runs (a dead letter put
// back in the outbox); before Run, use Deliver. It returns ctx's error if ctx ends before
// the loop takes them.
func (l *Loop) Redeliver(ctx context.Context, entries []brain.Outgoing) error {
	if len(entries) == 0 {
		return nil
	}
	select {
	case l.redeliver <- entries:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
