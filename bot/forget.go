package bot

import (
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

// unindexer removes turns from the memory search index inside a transaction.
type unindexer interface {
	UnindexTx(tx memory.Tx, chat int64, seqs []uint64) error
}

// stateEraser deletes a user's notes of how they are inside a transaction (memory's own
// bucket, which the store does not know).
type stateEraser interface {
	ForgetHowTheyAreTx(tx memory.Tx, user int64) ([]int64, error)
}

// recounter recomputes what the scheduler keeps of the store (its pending gauge).
type recounter interface{ Recount() error }

// usageForgetter drops a user's counts of the day (usageKeeper).
type usageForgetter interface {
	ForgetUser(user int64) (erased bool, err error)
}

// chatForgetter drops what a channel remembers of a chat in memory (telegram.Channel's
// quotes of the messages it sent).
type chatForgetter interface{ ForgetChat(chat int64) }

// userForgetter deletes a user's data from the store, the memory index and the notes of
// how they are together (one transaction), and then their counts of the day's usage and
// what the channel remembers of their chat.
type userForgetter struct {
	store   *storage.Store
	index   unindexer      // may be nil
	states  stateEraser    // may be nil
	sched   recounter      // may be nil
	usage   usageForgetter // may be nil
	channel chatForgetter  // may be nil
}

var _ forgetter = userForgetter{}

// ForgetUser deletes the user's private chat and their own data in every other chat.
func (f userForgetter) ForgetUser(user int64) (storage.ForgetReport, error) {
	var un storage.Unindexer
	if f.index != nil {
		un = func(tx *storage.Tx, chat int64, seqs []uint64) error { return f.index.UnindexTx(tx, chat, seqs) }
	}
	var erase []storage.UserEraser
	if f.states != nil {
		erase = append(erase, func(tx *storage.Tx, user int64) ([]int64, error) { return f.states.ForgetHowTheyAreTx(tx, user) })
	}
	rep, err := f.store.ForgetUser(user, un, erase...)
	if err != nil {
		return rep, err
	}
	if f.channel != nil {
		f.channel.ForgetChat(user) // their private chat: a reaction to it quotes nothing
	}
	if f.usage != nil {
		erased, err := f.usage.ForgetUser(user)
		if err != nil {
			return rep, err
		}
		rep.Erased = rep.Erased || erased
	}
	if f.sched == nil {
		return rep, nil
	}
	// The user's reminders went with the rest: the pending gauge counts them no more.
	return rep, f.sched.Recount()
}
