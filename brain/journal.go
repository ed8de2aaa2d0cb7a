package brain

import (
	"context"
	"time"
)

// TurnRecord is everything a finished turn writes at once: the inbox entries it consumed,
// the history it adds, the messages to send and the intents with lasting effects.
type TurnRecord struct {
	Done   []uint64
	Chat   int64
	User   int64
	Turns  []Turn
	Outbox []SendMessage
	// Intents are the turn's intents of a known kind other than SendMessage (messages are
	// in Outbox). The Journal applies those whose home (see HomeOf) includes InTurn,
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

// Journal is the durable side of the loop (implemented over storage by package bot).
type Journal interface {
	// Commit writes rec atomically — consumed inbox entries, history, outbox and the
	// InTurn intents — and returns the outbox entries it created (with rec.User). On
	// error nothing of rec is written.
	Commit(ctx context.Context, rec TurnRecord) ([]Outgoing, error)
	// MarkSent removes a delivered outbox entry.
	MarkSent(id uint64) error
	// Recent returns up to n of chat's latest turns, oldest first.
	Recent(chat int64, n int) ([]Turn, error)
}

// OutboxUpdater is an optional extension of a Journal: UpdateOutbox rewrites an undelivered
// outbox entry (a long message whose first parts were delivered), so a restart resumes it
// where it stopped.
type OutboxUpdater interface {
	UpdateOutbox(id uint64, m SendMessage) error
}

// Maintainer is an optional extension of a Journal: Maintain runs after a chat's turn,
// off the tick, for upkeep such as folding old turns into a summary.
type Maintainer interface {
	Maintain(ctx context.Context, chat int64) error
}
