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
	AddTx(tx *storage.Tx, item brain.ScheduleItem) error
	Cancel(chat int64, id string) (bool, error)
}

// upkeeper folds a chat's old turns into its summary.
type upkeeper interface {
	Maintain(ctx context.Context, chat int64) error
}

// journal is the core loop's durable side over the store: a turn's consumed inbox
// entries, history, search index and outbox land in one transaction.
type journal struct {
	store  *storage.Store
	index  indexer      // may be nil
	facts  factBook     // may be nil
	sched  scheduleBook // may be nil
	upkeep upkeeper     // may be nil
	log    *slog.Logger
}

var (
	_ brain.Journal       = (*journal)(nil)
	_ brain.Maintainer    = (*journal)(nil)
	_ brain.OutboxUpdater = (*journal)(nil)
)

// Commit writes the turn: consumed inbox entries, history, search index, new schedules
// and outbox in one transaction. Facts and cancellations are applied just before it: if
// the process dies between the two, the turn runs again (its inbox entries are still
// there) rather than losing what the user was told.
func (j *journal) Commit(_ context.Context, rec brain.TurnRecord) ([]brain.Outgoing, error) {
	var schedules []brain.ScheduleItem
	for _, in := range rec.Intents {
		if s, ok := in.(brain.Schedule); ok {
			schedules = append(schedules, s.Item)
			continue
		}
		if err := j.apply(rec, in); err != nil {
			// The model was told it worked; keep the turn and say so in the log.
			j.log.Error("apply intent", "intent", in.IntentName(), "err", err)
		}
	}
	c := storage.Commit{Done: rec.Done, Chat: rec.Chat, Turns: rec.Turns, Outbox: rec.Outbox, Rel: rec.Rel}
	c.Also = func(tx *storage.Tx) error {
		if j.index != nil && len(rec.Turns) > 0 {
			if err := j.index.IndexTx(tx, rec.Chat, rec.Turns); err != nil {
				return err
			}
		}
		if j.sched != nil {
			for _, item := range schedules {
				if err := j.sched.AddTx(tx, item); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return j.store.CommitTurn(c, rec.At)
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

// UpdateOutbox records how far a long message got, for a resume after a restart.
func (j *journal) UpdateOutbox(id uint64, m brain.SendMessage) error {
	return j.store.UpdateOutbox(id, m)
}

// Maintain folds old turns of chat into its summary when enough have gathered.
func (j *journal) Maintain(ctx context.Context, chat int64) error {
	if j.upkeep == nil {
		return nil
	}
	return j.upkeep.Maintain(ctx, chat)
}

func (j *journal) Recent(chat int64, n int) ([]brain.Turn, error) { return j.store.History(chat, n) }
