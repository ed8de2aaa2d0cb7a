package loop

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Sender delivers a message. It returns an error wrapping ErrBlocked when the user blocked
// the bot, ErrUndeliverable when the message can never be delivered, or a
// *PartialSendError when the first parts of a split message went out; other errors leave
// the message in the outbox for a later try.
type Sender interface {
	Send(ctx context.Context, m brain.SendMessage) error
}

// The rules of delivery, per chat:
//
//   - A job delivers its entries in order. Each is delivered, or dropped when it never
//     can be (ErrUndeliverable, kept as a dead letter that records the parts delivered
//     before the refusal, so a retry sends only the rest; after ErrBlocked, the rest too,
//     and the chat goes dormant); both remove it from the outbox.
//   - Any other failure stops the job: that entry (resuming after its delivered parts)
//     and the ones after it wait, and the chat is in backoff.
//   - While a chat is in backoff, its new replies are committed but not sent: they are
//     queued behind the earlier ones, in order. The backoff (30 s doubling per failed try,
//     up to 10 min) decides when the waiting entries are due; due entries go to the front
//     of the chat's queue on the next tick.
//   - A successful delivery resets the backoff: what was queued behind it is due at once.
//   - /forget drops the chat's waiting entries (the handler deleted them from the outbox).

// deliveryOutcome is what became of a job's outbox entries.
type deliveryOutcome uint8

const (
	// nothingToDeliver: the job had no entries.
	nothingToDeliver deliveryOutcome = iota
	// delivered: every entry was sent, or dropped because it never can be.
	delivered
	// failed: a send failed; that entry and the ones after it wait for a retry.
	failed
	// queuedBehind: the chat was in backoff, so the entries were committed but not tried;
	// they wait behind the chat's earlier ones.
	queuedBehind
)

// delivery is a job's report on its outbox entries.
type delivery struct {
	outcome deliveryOutcome
	sent    []brain.MessageKind // the kinds of the entries sent, in order
	openers []brain.Opener      // the first messages among them, with when each went out
	sentAt  time.Time           // when the last of them went out
	blocked bool                // the recipient blocked the bot
	left    []brain.Outgoing    // failed or queuedBehind: the entries to try again, oldest first
}

// deliver sends entries in order and reports in d what became of them (as it goes: a
// panicking Sender leaves what was sent before it recorded); the error is the failure
// that stopped it, if any.
func (l *Loop) deliver(ctx context.Context, d *delivery, entries []brain.Outgoing) error {
	if len(entries) == 0 {
		return nil
	}
	d.outcome = delivered
	for i, e := range entries {
		var sendErr error
		if !d.blocked {
			sendErr = l.send.Send(ctx, e.Msg)
		}
		switch {
		case d.blocked:
			// Nobody can receive the rest: drop it below.
		case sendErr == nil:
			d.sent = append(d.sent, e.Msg.Kind)
			d.sentAt = l.deps.Clock.Now()
			if o := e.Msg.Opener; o.Kind != "" {
				o.At = d.sentAt
				d.openers = append(d.openers, o)
			}
			l.m.observeLatency(e.Msg, d.sentAt)
		case errors.Is(sendErr, brain.ErrBlocked):
			d.blocked = true
			l.log.Info("recipient blocked the bot; relationship is dormant; undelivered messages dropped")
		case errors.Is(sendErr, brain.ErrUndeliverable):
			l.log.Error("message cannot be delivered; kept as a dead letter", "kind", e.Msg.Kind, "err", sendErr)
			l.m.sendFailures.Inc()
			msg, user := e.Msg, e.User
			if user == 0 {
				user = privateUser(msg.Chat)
			}
			var partial *brain.PartialSendError
			if errors.As(sendErr, &partial) {
				// The first parts went out before the refusal: a retry sends the rest.
				msg.SkipParts = max(msg.SkipParts, partial.Sent)
				msg.Arrived = time.Time{}
			}
			l.bury(brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: msg.Chat, User: user, At: l.deps.Clock.Now(),
				Reason: sendErr.Error(), Message: &msg})
		default:
			l.log.Error("send failed; kept in the outbox for another try", "kind", e.Msg.Kind, "err", sendErr)
			l.m.sendFailures.Inc()
			d.outcome = failed
			d.left = append([]brain.Outgoing(nil), entries[i:]...)
			var partial *brain.PartialSendError
			if errors.As(sendErr, &partial) {
				if partial.Sent > 0 {
					// The first part went out: the reply's latency ends here, once.
					l.m.observeLatency(e.Msg, l.deps.Clock.Now())
					d.left[0].Msg.Arrived = time.Time{}
				}
				d.left[0].Msg.SkipParts = max(d.left[0].Msg.SkipParts, partial.Sent)
				if u, ok := l.deps.Journal.(OutboxUpdater); ok {
					if err := u.UpdateOutbox(e.ID, d.left[0].Msg); err != nil {
						l.log.Error("record delivered parts in the outbox", "err", err)
					}
				}
			}
			return sendErr
		}
		if err := l.deps.Journal.MarkSent(e.ID); err != nil {
			l.log.Error("mark sent", "err", err)
		}
		l.m.outboxPending.Dec()
	}
	return nil
}

// privateUser is the user of a private chat (Telegram's private chats have the user's
// id, and groups negative ids); 0 for a group. It attributes outbox entries written
// before they recorded their user.
func privateUser(chat int64) int64 {
	if chat > 0 {
		return chat
	}
	return 0
}

// waiting is a chat's entries waiting for another try.
type waiting struct {
	entries []brain.Outgoing // oldest first; nil while their retry is queued or running
	due     time.Time        // when the next try is due
	attempt int              // tries failed in a row, for the backoff
}

// backoff makes w due after the backoff of its next failed try.
func (w *waiting) backoff(now time.Time) {
	w.due = now.Add(min(30*time.Second<<min(w.attempt, 5), 10*time.Minute))
	w.attempt++
}

// retries are the chats' entries waiting for another try. Owned by the loop goroutine.
type retries struct {
	chats map[int64]*waiting
}

// inBackoff reports whether chat has entries waiting, so new ones must wait behind them.
func (r *retries) inBackoff(chat int64) bool {
	w := r.chats[chat]
	return w != nil && len(w.entries) > 0
}

func (r *retries) of(chat int64) *waiting {
	if r.chats == nil {
		r.chats = map[int64]*waiting{}
	}
	w := r.chats[chat]
	if w == nil {
		w = &waiting{}
		r.chats[chat] = w
	}
	return w
}

// settle applies a job's delivery report to its chat's waiting entries.
func (r *retries) settle(chat int64, d delivery, now time.Time) {
	switch d.outcome {
	case delivered:
		w := r.chats[chat]
		if w == nil || len(d.sent) == 0 {
			return
		}
		if len(w.entries) == 0 {
			delete(r.chats, chat)
			return
		}
		// Replies queued behind the ones just delivered are due now.
		w.due, w.attempt = now, 0
	case failed:
		// These entries are older than any queued behind them while they were tried: they go first.
		w := r.of(chat)
		w.entries = append(slices.Clone(d.left), w.entries...)
		w.backoff(now)
	case queuedBehind:
		if len(d.left) == 0 {
			return
		}
		w := r.of(chat)
		w.entries = append(w.entries, d.left...)
		if w.due.IsZero() {
			w.backoff(now)
		} // else queued behind the waiting entries: their backoff stands
	}
}

// dueNow makes chat's waiting entries due at now, with the backoff reset.
func (r *retries) dueNow(chat int64, now time.Time) {
	if w := r.chats[chat]; w != nil {
		w.due, w.attempt = now, 0
	}
}

// drop forgets chat's waiting entries and returns how many there were.
func (r *retries) drop(chat int64) int {
	w := r.chats[chat]
	if w == nil {
		return 0
	}
	delete(r.chats, chat)
	return len(w.entries)
}

// retryDue queues due entries at the front of their chats' queues, so later replies do
// not overtake them any further.
func (l *Loop) retryDue(ctx context.Context, now time.Time) {
	for chat, w := range l.retries.chats {
		if len(w.entries) == 0 || now.Before(w.due) {
			continue
		}
		q := l.queue(chat)
		q.jobs = append([]job{{kind: jobDeliver, deliver: w.entries}}, q.jobs...)
		w.entries = nil
		l.startNext(ctx, chat)
	}
}

// dropUndelivered drops a forgotten chat's entries waiting for a (re)try: the handler
// deleted them from the outbox, so they must not be sent.
func (l *Loop) dropUndelivered(chat int64) {
	n := l.retries.drop(chat)
	if q := l.chats[chat]; q != nil {
		q.jobs = slices.DeleteFunc(q.jobs, func(j job) bool {
			if j.kind == jobDeliver {
				n += len(j.deliver)
				return true
			}
			return false
		})
	}
	l.m.outboxPending.Sub(float64(n))
}
