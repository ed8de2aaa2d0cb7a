package brain

import (
	"context"
	"time"
)

// Thinker is the cognition layer. Think returns an error only when no answer could be
// produced at all (the caller then apologises to a user who wrote); a decision to say
// nothing is an Outcome without a SendMessage.
type Thinker interface {
	Think(ctx context.Context, w Wake) (Outcome, error)
}

// Autonomic is the layer of cheap neurons. Sense appends the signals of noticeable changes
// to out and returns it; it must not allocate on an idle tick, never blocks and never
// calls the network.
type Autonomic interface {
	Sense(now time.Time, st *State, out []Signal) []Signal
}

// Neuron is one autonomic sensor; plugins may contribute neurons.
type Neuron interface {
	Name() string
	Check(now time.Time, st *State) (Signal, bool)
}

// Aggregator is the aggregation layer: it folds signals into buckets, keeps the
// AckRegistry and decides which chats cognition must think about.
type Aggregator interface {
	// Decide appends wakes for this tick to out and returns it. sigs are this tick's
	// signals (user messages included). It must not allocate on an idle tick.
	Decide(now time.Time, st *State, sigs []Signal, out []Wake) []Wake
	// Ack records an acknowledgement (handled, deferred, suppressed).
	Ack(a Ack)
	// ClearChat drops every ack of chat (a user message clears that user's acks).
	ClearChat(chat int64)
	// Acks lists the live acks (for persistence and /status).
	Acks(now time.Time) []Ack
}
