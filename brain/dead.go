package brain

import (
	"context"
	"time"
)

// DeadKind says what failed for good.
type DeadKind string

// Dead-letter kinds (also the `kind` label of anima_dead_letters_total).
const (
	// DeadUndeliverable: the platform refused a message for good (ErrUndeliverable).
	DeadUndeliverable DeadKind = "undeliverable"
	// DeadRunFailed: cognition failed on a wake (not an outage); its signals were
	// consumed, a user who wrote got the apology.
	DeadRunFailed DeadKind = "run_failed"
	// DeadHoldExpired: user messages held for the model longer than LoopConfig.MaxHold,
	// consumed unanswered.
	DeadHoldExpired DeadKind = "hold_expired"
)

// DeadLetter is work that failed for good, kept (for a week, by the store) with its
// reason so an operator can see it and retry it.
type DeadLetter struct {
	// ID is the store's number for it, set when it is buried.
	ID   uint64   `json:"id"`
	Kind DeadKind `json:"kind"`
	Chat int64    `json:"chat"`
	// User is whom it concerns (0 when unknown: a refused message in a group).
	User   int64     `json:"user,omitempty"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	// Message is the refused message (DeadUndeliverable).
	Message *SendMessage `json:"message,omitempty"`
	// Signals are the consumed signals of the run (DeadRunFailed, DeadHoldExpired).
	Signals []Signal `json:"signals,omitempty"`
}

// DeadLetters keeps work that failed for good (implemented over storage). Bury returns
// the store's error; the work is dropped all the same.
type DeadLetters interface {
	Bury(d DeadLetter) error
}

// bury keeps d (when the loop has DeadLetters) and counts it.
func (l *CoreLoop) bury(d DeadLetter) {
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
func (l *CoreLoop) Redeliver(ctx context.Context, entries []Outgoing) error {
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
func recorded(sigs []Signal) []Signal {
	var out []Signal
	for _, s := range sigs {
		if s.ID != 0 {
			out = append(out, s)
		}
	}
	return out
}
