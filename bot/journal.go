package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/storage"
)

// indexer adds turns to the memory search index inside the turn's transaction.
type indexer interface {
	IndexTx(tx memory.Tx, chat int64, turns []brain.Turn) error
}

// factBook stores facts about users, per chat.
type factBook interface {
	RememberTx(tx memory.Tx, chat, user int64, attribute, value string, at time.Time) error
}

// stateBook keeps the notes of how people are, per chat and user.
type stateBook interface {
	NoteStateTx(tx memory.Tx, chat, user int64, text string, replace bool, at time.Time) error
}

// scheduleBook stores follow-ups and reminders.
type scheduleBook interface {
	AddTx(tx schedule.Tx, item brain.ScheduleItem) error
	CancelTx(tx schedule.Tx, chat int64, id string) (bool, error)
}

// upkeeper folds a chat's old turns into its summary.
type upkeeper interface {
	Maintain(ctx context.Context, chat int64) error
}

// journal is the core loop's durable side over the store: a turn's consumed inbox
// entries, history, search index, outbox and InTurn intents land in one transaction.
type journal struct {
	store  *storage.Store
	index  indexer      // may be nil
	facts  factBook     // may be nil
	states stateBook    // may be nil
	sched  scheduleBook // may be nil
	upkeep upkeeper     // may be nil
	plugs  *plugins.Set // may be nil
	log    *slog.Logger
}

var (
	_ loop.Journal       = (*journal)(nil)
	_ loop.Maintainer    = (*journal)(nil)
	_ loop.OutboxUpdater = (*journal)(nil)
)

// Commit writes the turn in one transaction: consumed inbox entries, history, search
// index, outbox and the intents whose home is InTurn (brain.HomeOf). If any of it fails,
// none of it is written and the turn runs again (its inbox entries are still there).
func (j *journal) Commit(_ context.Context, rec brain.TurnRecord) ([]brain.Outgoing, error) {
	c := storage.Commit{Done: rec.Done, Chat: rec.Chat, User: rec.User, Turns: rec.Turns, Outbox: rec.Outbox, Rel: rec.Rel}
	c.Also = func(tx *storage.Tx) error {
		if j.index != nil && len(rec.Turns) > 0 {
			if err := j.index.IndexTx(tx, rec.Chat, rec.Turns); err != nil {
				return err
			}
		}
		for _, in := range rec.Intents {
			if brain.HomeOf(in)&brain.InTurn == 0 {
				continue
			}
			if err := j.applyTx(tx, rec, in); err != nil {
				return fmt.Errorf("apply %s: %w", in.IntentName(), err)
			}
		}
		return nil
	}
	return j.store.CommitTurn(c, rec.At)
}

// applyTx applies an InTurn intent inside the turn's transaction.
func (j *journal) applyTx(tx *storage.Tx, rec brain.TurnRecord, in brain.Intent) error {
	switch v := in.(type) {
	case brain.Schedule:
		if j.sched == nil {
			return nil
		}
		err := j.sched.AddTx(tx, v.Item)
		if errors.Is(err, schedule.ErrTooMany) {
			// Refused before anything was written (the tool checks first; turns committed
			// together can still pass it together). Keep the turn.
			j.log.Warn("reminder not stored", "err", err)
			return nil
		}
		return err
	case brain.CancelSchedule:
		if j.sched == nil {
			return nil
		}
		_, err := j.sched.CancelTx(tx, v.Chat, v.ID)
		return err
	case brain.Remember:
		if j.facts == nil {
			return nil
		}
		chat, user := whose(v.Chat, v.User, rec)
		err := j.facts.RememberTx(tx, chat, user, v.Attribute, v.Value, rec.At)
		if errors.Is(err, memory.ErrEmptyFact) || errors.Is(err, memory.ErrTooManyFacts) {
			// Refused before anything was written. The model was told it worked; keep
			// the turn and say so in the log.
			j.log.Error("fact not remembered", "err", err)
			return nil
		}
		return err
	case brain.NoteState:
		if j.states == nil {
			return nil
		}
		chat, user := whose(v.Chat, v.User, rec)
		return j.states.NoteStateTx(tx, chat, user, v.Text, v.Replace, rec.At)
	case brain.PluginChange:
		if j.plugs == nil {
			return nil
		}
		return j.plugs.Apply(pluginBucket{tx: tx, name: pluginBucketName(v.Plugin)}, v, rec.At)
	}
	// brain.HomeOf says InTurn, but nothing here applies it (SendMessage never gets here:
	// the loop moves messages to rec.Outbox).
	j.log.Error("intent of a kind the journal does not apply; dropped", "intent", in.IntentName())
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

// TurnJournal is the durable side of a turn as `anima run` builds it: the Journal the core
// loop commits through, which also folds old turns into summaries.
type TurnJournal interface {
	loop.Journal
	loop.Maintainer
}

// whose is the chat and user an intent names, each taken from the turn rec when the intent
// leaves it 0 (the model named no one: the turn's own chat and speaker).
func whose(chat, user int64, rec brain.TurnRecord) (int64, int64) {
	if chat == 0 {
		chat = rec.Chat
	}
	if user == 0 {
		user = rec.User
	}
	return chat, user
}
