package loop

import (
	"context"
	"time"

	"github.com/anima-bot/anima/brain"
)

// userDriven reports whether a wake is caused by a user's message: those are what the
// per-user rate limit counts (reactions wake nothing).
func userDriven(w brain.Wake) bool { return w.Reason.Code == brain.ReasonUserMessage }

// limitedWake reports whether job j counts against the per-user rate limit, and the wake
// admit judges it by: a user-driven wake, or a user's command (each /forget yes rewrites
// a store; a command sent over and over must not cost more than messages would).
func limitedWake(j job) (brain.Wake, bool) {
	switch {
	case j.kind == jobWake && userDriven(j.wake):
		return j.wake, true
	case j.kind == jobCommand && j.command.User != 0:
		return brain.Wake{Chat: j.command.Chat, User: j.command.User, Signals: []brain.Signal{j.command}}, true
	}
	return brain.Wake{}, false
}

// admit decides whether chat's next job, a user-driven wake, may start now. When the
// user's runs are used up the chat is throttled: the wake stays queued (later wakes of
// the chat fold into it) until the limit allows it, and the returned notice job, if ok,
// is to run first: the user hears once per limited period that their messages wait.
func (l *Loop) admit(chat int64, w brain.Wake) (start bool, notice job, ok bool) {
	now := l.deps.Clock.Now()
	allowed, at := l.limit.allow(w.User, now)
	if allowed {
		delete(l.throttled, chat)
		return true, job{}, false
	}
	if _, throttled := l.throttled[chat]; !throttled {
		l.deps.Refusals.Refused(brain.LimitUserRuns)
		l.log.Info("user throttled by the rate limit; their messages wait for the next allowed run", "chat", chat, "until", at)
	}
	l.throttled[chat] = at
	if until, seen := l.noticed[w.User]; seen && now.Before(until) {
		return false, job{}, false
	}
	l.noticed[w.User] = at
	replyTo := 0
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage {
			replyTo = s.MessageID
		}
	}
	return false, job{kind: jobNotice, notice: brain.SendMessage{Chat: chat, Text: l.cfg.RateNotice, Kind: brain.KindSystem, Plain: true, ReplyTo: replyTo}}, true
}

// releaseThrottled starts the throttled chats (rate limited) whose wake may run now.
func (l *Loop) releaseThrottled(ctx context.Context, now time.Time) {
	for chat, until := range l.throttled {
		if !now.Before(until) {
			delete(l.throttled, chat)
			l.startNext(ctx, chat)
		}
	}
	if now.Sub(l.limitPruned) >= time.Minute {
		l.limitPruned = now
		l.limit.prune(now)
		for u, until := range l.noticed {
			if !now.Before(until) {
				delete(l.noticed, u)
			}
		}
	}
}

// notify commits a notice (no model call) as a turn of its own and delivers it.
func (l *Loop) notify(ctx context.Context, r *result, m brain.SendMessage, inBackoff bool) {
	l.commit(ctx, r, brain.TurnRecord{Chat: m.Chat, At: l.deps.Clock.Now(), Outbox: []brain.SendMessage{m}}, inBackoff)
}
