package bot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// indexer adds turns to the memory search index inside the turn's transaction.
type indexer interface {
	IndexTx(tx *storage.Tx, chat int64, turns []brain.Turn) error
}

// factBook stores facts about users.
type factBook interface {
	Remember(user int64, attribute, value string, at time.Time) error
}

// scheduleBook stores follow-ups and reminders.
type scheduleBook interface {
	Add(item brain.ScheduleItem) error
	Cancel(chat int64, id string) (bool, error)
}

// journal is the core loop's durable side over the store: a turn's consumed inbox
// entries, history, search index and outbox land in one transaction.
type journal struct {
	store *storage.Store
	index indexer      // may be nil
	facts factBook     // may be nil
	sched scheduleBook // may be nil
	log   *slog.Logger
}

var _ brain.Journal = (*journal)(nil)

// Commit applies the turn's lasting intents, then writes the turn. Intents go first: if
// the process dies between the two, the turn runs again (its inbox entries are still
// there) rather than losing a reminder the user was told about.
func (j *journal) Commit(_ context.Context, rec brain.TurnRecord) ([]brain.Outgoing, error) {
	for _, in := range rec.Intents {
		if err := j.apply(rec, in); err != nil {
			// The model was told it worked; keep the turn and say so in the log.
			j.log.Error("apply intent", "intent", in.IntentName(), "err", err)
		}
	}
	c := storage.Commit{Done: rec.Done, Chat: rec.Chat, Turns: rec.Turns, Outbox: rec.Outbox, Rel: rec.Rel}
	if j.index != nil && len(rec.Turns) > 0 {
		c.Also = func(tx *storage.Tx) error { return j.index.IndexTx(tx, rec.Chat, rec.Turns) }
	}
	entries, err := j.store.CommitTurn(c, rec.At)
	if err != nil {
		return nil, err
	}
	out := make([]brain.Outgoing, len(entries))
	for i, e := range entries {
		out[i] = brain.Outgoing{ID: e.ID, Msg: e.Msg}
	}
	return out, nil
}

func (j *journal) apply(rec brain.TurnRecord, in brain.Intent) error {
	switch v := in.(type) {
	case brain.Remember:
		if j.facts == nil {
			return nil
		}
		user := v.User
		if user == 0 {
			user = rec.User
		}
		return j.facts.Remember(user, v.Attribute, v.Value, rec.At)
	case brain.Schedule:
		if j.sched == nil {
			return nil
		}
		return j.sched.Add(v.Item)
	case brain.CancelSchedule:
		if j.sched == nil {
			return nil
		}
		if _, err := j.sched.Cancel(v.Chat, v.ID); err != nil {
			return fmt.Errorf("cancel %s: %w", v.ID, err)
		}
	}
	return nil
}

func (j *journal) MarkSent(id uint64) error { return j.store.MarkSent(id) }

func (j *journal) Recent(chat int64, n int) ([]brain.Turn, error) { return j.store.History(chat, n) }
