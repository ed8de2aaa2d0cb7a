package brain

import "time"

// DeadKind says what failed for good.
type DeadKind string

// Dead-letter kinds (also the `kind` label of anima_dead_letters_total).
const (
	// DeadUndeliverable: the platform refused a message for good (ErrUndeliverable).
	DeadUndeliverable DeadKind = "undeliverable"
	// DeadRunFailed: cognition failed on a wake (not an outage); its signals were
	// consumed, a user who wrote got the apology.
	DeadRunFailed DeadKind = "run_failed"
	// DeadHoldExpired: user messages held for the model longer than loop.Config.MaxHold,
	// consumed unanswered.
	DeadHoldExpired DeadKind = "hold_expired"
)

// DeadLetter is work that failed for good, kept (for a week, by the store, a bounded
// number per user and per chat) with its reason so an operator can see it and retry it.
type DeadLetter struct {
	// ID is the store's number for it, set when it is buried.
	ID   uint64   `json:"id"`
	Kind DeadKind `json:"kind"`
	Chat int64    `json:"chat"`
	// User is whom it concerns (0 when unknown: a refused message in a group).
	User   int64     `json:"user,omitempty"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	// Message is the refused message (DeadUndeliverable); its SkipParts are the parts
	// delivered before the refusal, which a retry does not send again.
	Message *SendMessage `json:"message,omitempty"`
	// Signals are the consumed signals of the run (DeadRunFailed, DeadHoldExpired).
	Signals []Signal `json:"signals,omitempty"`
}

// DeadLetters keeps work that failed for good (implemented over storage), a bounded
// number per user and per chat. Bury returns how many older letters it dropped to make
// room, or the store's error (the work is dropped all the same).
type DeadLetters interface {
	Bury(d DeadLetter) (dropped int, err error)
}
