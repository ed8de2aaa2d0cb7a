package brain

import "time"

// TurnRecord is everything a finished turn writes at once: the inbox entries it consumed,
// the history it adds, the messages to send and the intents with lasting effects.
type TurnRecord struct {
	Done   []uint64
	Chat   int64
	User   int64
	Turns  []Turn
	Outbox []SendMessage
	// Intents are the turn's intents of a known kind other than SendMessage (messages are
	// in Outbox). The loop.Journal applies those whose home (see HomeOf) includes InTurn,
	// inside the commit's transaction; the loop applies the InLoop ones after it.
	Intents []Intent
	// Rel, when set, is stored as the chat's relationship in the same transaction.
	Rel *Relationship
	At  time.Time
}

// Outgoing is an outbox entry: a message durably queued for sending, written by the turn
// that produced it and removed once delivered. The store keeps it in this form.
type Outgoing struct {
	ID      uint64      `json:"id"`
	Msg     SendMessage `json:"msg"`
	Created time.Time   `json:"created"`
	// User is the user of the turn that wrote it (TurnRecord.User; 0 when none): whose a
	// refused message's dead letter is, so that forgetting the user deletes it in a group.
	User int64 `json:"user,omitempty"`
}
