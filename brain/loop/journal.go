package loop

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

// Journal is the durable side of the loop (implemented over storage by package bot).
type Journal interface {
	// Commit writes rec atomically — consumed inbox entries, history, outbox and the
	// InTurn intents — and returns the outbox entries it created (with rec.User). On
	// error nothing of rec is written.
	Commit(ctx context.Context, rec brain.TurnRecord) ([]brain.Outgoing, error)
	// MarkSent removes a delivered outbox entry.
	MarkSent(id uint64) error
	// Recent returns up to n of chat's latest turns, oldest first.
	Recent(chat int64, n int) ([]brain.Turn, error)
}

// OutboxUpdater is an optional extension of a Journal: UpdateOutbox rewrites an undelivered
// outbox entry (a long message whose first parts were delivered), so a restart resumes it
// where it stopped.
type OutboxUpdater interface {
	UpdateOutbox(id uint64, m brain.SendMessage) error
}

// Maintainer is an optional extension of a Journal: Maintain runs after a chat's turn,
// off the tick, for upkeep such as folding old turns into a summary.
type Maintainer interface {
	Maintain(ctx context.Context, chat int64) error
}
