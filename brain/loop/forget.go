package loop

import (
	"context"
	"slices"

	"github.com/anima-bot/anima/brain"
)

// forgetMember drops what the loop holds of a forgotten user in the chats other than
// their private one (which forget drops whole), so that nothing of theirs is answered or
// sent after the erasure: their messages and voice notes in a group's queued wakes and
// among its messages held for the model, their reactions waiting for the group's next
// wake, and the answers to them waiting to be delivered. The handler's erasure deleted
// these from the inbox and the outbox; a drop consumes the signals whatever deleted them.
// Other members' messages stay, and are answered. A run already under way for the user is
// past reach: its turn commits as it ends.
func (l *Loop) forgetMember(ctx context.Context, user int64) {
	drops := map[int64][]uint64{}
	for chat, q := range l.chats {
		if chat == user {
			continue
		}
		q.jobs = slices.DeleteFunc(q.jobs, func(j job) bool { return l.forgetInJob(&j, user, drops) })
		if len(q.jobs) == 0 && !q.running && !q.waiting {
			delete(l.chats, chat) // not busy: anima may write first again
		}
	}
	for chat, c := range l.held.chats {
		if chat == user {
			continue
		}
		c.wake.Signals = dropSignalsOf(c.wake.Signals, user, drops)
		if len(c.wake.Signals) == 0 && !c.running {
			delete(l.held.chats, chat)
		}
	}
	l.held.gauge.Set(float64(len(l.held.chats)))
	for chat, acks := range l.stepper.acks {
		if chat != user {
			l.stepper.acks[chat] = dropSignalsOf(acks, user, drops)
		}
	}
	n := 0
	for chat, w := range l.retries.chats {
		if chat != user {
			before := len(w.entries)
			w.entries = slices.DeleteFunc(w.entries, func(e brain.Outgoing) bool { return e.User == user })
			n += before - len(w.entries)
		}
	}
	l.m.outboxPending.Sub(float64(n))
	for chat, ids := range drops {
		l.log.Info("a forgotten member's waiting messages dropped unanswered", "chat", chat, "signals", len(ids))
		l.dispatch(ctx, job{kind: jobDrop, drop: brain.TurnRecord{Chat: chat, Done: ids, At: l.deps.Clock.Now()}})
	}
}

// forgetInJob drops user's part of a queued job, adding the inbox ids of their signals to
// drops, and reports whether nothing of the job is left: a wake of theirs goes whole
// (another member's reactions it carried wait for the chat's next wake again), another
// wake loses their reactions, a delivery the answers to them.
func (l *Loop) forgetInJob(j *job, user int64, drops map[int64][]uint64) bool {
	switch j.kind {
	case jobWake:
		if j.wake.User != user {
			j.wake.Signals = dropSignalsOf(j.wake.Signals, user, drops)
			return false
		}
		rest := dropSignalsOf(j.wake.Signals, user, drops)
		if slices.ContainsFunc(rest, func(s brain.Signal) bool { return s.Type != brain.SignalReaction }) {
			j.wake.Signals = rest // not the user's wake alone (a group folds one member's)
			return false
		}
		for _, s := range rest {
			l.stepper.pend(s)
		}
		return true
	case jobDeliver:
		before := len(j.deliver)
		j.deliver = slices.DeleteFunc(j.deliver, func(e brain.Outgoing) bool { return e.User == user })
		l.m.outboxPending.Sub(float64(before - len(j.deliver)))
		return len(j.deliver) == 0
	}
	return false
}

// dropSignalsOf returns sigs without user's, adding the inbox ids of theirs to drops.
func dropSignalsOf(sigs []brain.Signal, user int64, drops map[int64][]uint64) []brain.Signal {
	return slices.DeleteFunc(slices.Clone(sigs), func(s brain.Signal) bool {
		if s.User != user {
			return false
		}
		if s.ID != 0 {
			drops[s.Chat] = append(drops[s.Chat], s.ID)
		}
		return true
	})
}
