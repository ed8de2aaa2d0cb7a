package loop

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// work runs one job off the loop goroutine: it may block on the model, the store and the
// network. It never panics out. inBackoff says the chat's earlier messages wait for a
// retry: the job's messages are committed but queued behind them. noticed says the chat
// was already told the model is unreachable.
func (l *Loop) work(ctx context.Context, chat int64, j job, view CommandView, inBackoff, noticed bool) (r result) {
	r.chat = chat
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("chat job panicked", "chat_job", j.kind, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			l.m.panics.Inc()
			r.err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch j.kind {
	case jobDeliver:
		r.err = l.deliver(ctx, &r.delivery, j.deliver)
	case jobCommand:
		l.command(ctx, &r, j.command, view, inBackoff)
	case jobWake:
		l.think(ctx, &r, j.wake, inBackoff, noticed)
	case jobNotice:
		l.notify(ctx, &r, j.notice, inBackoff)
	case jobDrop:
		if j.dead != nil {
			l.bury(*j.dead) // kept before the commit consumes its signals
		}
		l.commit(ctx, &r, j.drop, inBackoff)
	}
	return r
}

// think runs cognition for a wake and commits what came of it as the chat's turn: the
// user's messages, the answer, its intents.
func (l *Loop) think(ctx context.Context, r *result, w brain.Wake, inBackoff, noticed bool) {
	var done []uint64
	asked, replyTo := false, 0
	for _, s := range w.Signals {
		if s.ID != 0 {
			done = append(done, s.ID)
		}
		if s.Type == brain.SignalUserMessage {
			asked, replyTo = true, s.MessageID
		}
	}
	stopTyping, stopDrafts := func() {}, func() {}
	if asked {
		stopTyping = l.typing(ctx, w.Chat)
		if l.deps.Drafter != nil && !w.Rel.Group {
			w.Drafter, stopDrafts = startDrafts(ctx, l.deps.Drafter, l.cfg.TypingDelay, &l.wg)
		}
	}
	if p, ok := l.deps.Thinker.(brain.Perceiver); ok && brain.HasMedia(w.Signals) {
		w = p.Perceive(ctx, w, l.deps.Media) // downloads and transcriptions: here, off the tick
	}
	mw, notices, skip := forModel(w)
	r.thinking = true
	var (
		out brain.Outcome
		err error
	)
	if !skip {
		out, err = l.safeThink(ctx, mw)
	}
	stopTyping()
	stopDrafts()
	now := l.deps.Clock.Now()
	rec := brain.TurnRecord{Done: done, Chat: w.Chat, User: w.User, At: now}
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage {
			at := s.At
			if at.IsZero() {
				at = now
			}
			rec.Turns = append(rec.Turns, brain.Turn{Role: "user", Text: s.Text, At: at, User: s.User, Name: s.UserName})
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopping: leave the signals in the inbox for the next start.
			r.err = err
			return
		}
		if asked && errors.Is(err, brain.ErrModelUnavailable) {
			l.holdForModel(ctx, r, w, replyTo, inBackoff, noticed)
			return
		}
		l.log.Error("cognition failed", "reason", w.Reason.Code, "err", err)
		if sigs := recorded(w.Signals); len(sigs) > 0 {
			l.bury(brain.DeadLetter{Kind: brain.DeadRunFailed, Chat: w.Chat, User: w.User, At: now, Reason: err.Error(), Signals: sigs})
		}
		if !asked {
			// Nobody is waiting for an answer; the signals are consumed.
			rec.Turns = nil
			l.commit(ctx, r, rec, inBackoff)
			return
		}
		out = brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: l.cfg.Apology, Kind: brain.KindSystem, ReplyTo: replyTo, Plain: true}}}
	}
	r.thought = err == nil
	r.status = out.Status
	msgs, intents := l.sortIntents(out.Intents)
	msgs = append(notices, msgs...)
	rec.Intents = intents
	l.answer(&rec, w, msgs)
	stampArrival(rec.Outbox, w.Signals...)
	if w.Reason.Code == brain.ReasonProactive || w.Reason.Code == brain.ReasonFollowup {
		if len(rec.Outbox) == 0 {
			r.silent = true
			l.m.proactive.WithLabelValues("silent").Inc()
		} else {
			l.m.proactive.WithLabelValues("sent").Inc()
		}
		rel := w.Rel
		rec.Rel = &rel
	}
	r.intents = rec.Intents
	l.commit(ctx, r, rec, inBackoff)
	if m, ok := l.deps.Journal.(Maintainer); ok && len(rec.Turns) > 0 && r.err == nil {
		if err := m.Maintain(ctx, w.Chat); err != nil && ctx.Err() == nil {
			l.log.Warn("memory upkeep", "err", err)
		}
	}
}

// holdForModel leaves the messages of a run that could not reach the model in the inbox
// (nothing of the turn is committed) for the loop to hold, and tells the user once per
// outage that they will be answered.
func (l *Loop) holdForModel(ctx context.Context, r *result, w brain.Wake, replyTo int, inBackoff, noticed bool) {
	l.log.Warn("the model is unreachable; messages held until it is back", "chat", w.Chat, "messages", len(w.Signals))
	r.held = &w
	if noticed {
		return
	}
	notice := brain.SendMessage{Chat: w.Chat, Text: l.cfg.OutageNotice, Kind: brain.KindSystem, ReplyTo: replyTo, Plain: true}
	l.commit(ctx, r, brain.TurnRecord{Chat: w.Chat, User: w.User, Outbox: []brain.SendMessage{notice}, At: l.deps.Clock.Now()}, inBackoff)
}

// answer adds the messages of an outcome to the turn: to the outbox and, unless they are
// system messages, to the history. Empty messages are dropped, and so are proactive ones
// that repeat a recent message.
func (l *Loop) answer(rec *brain.TurnRecord, w brain.Wake, msgs []brain.SendMessage) {
	for _, m := range msgs {
		if m.Chat == 0 {
			m.Chat = w.Chat
		}
		if strings.TrimSpace(m.Text) == "" {
			continue
		}
		if m.Kind == brain.KindProactive || m.Kind == brain.KindFollowup {
			if l.repeats(w.Chat, m.Text) {
				l.log.Info("proactive message repeats a recent one; not sent", "reason", w.Reason.Code)
				l.m.proactive.WithLabelValues("duplicate").Inc()
				continue
			}
		}
		rec.Outbox = append(rec.Outbox, m)
		if m.Kind != brain.KindSystem {
			rec.Turns = append(rec.Turns, brain.Turn{Role: "assistant", Text: m.Text, At: rec.At, Kind: m.Kind, User: w.User})
		}
	}
}

// safeThink is Thinker.Think with a panic turned into an error: a user who wrote still
// gets the apology, and the signals are consumed rather than replayed (and panicking
// again) on every start.
func (l *Loop) safeThink(ctx context.Context, w brain.Wake) (out brain.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("cognition panicked", "reason", w.Reason.Code, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			l.m.panics.Inc()
			err = fmt.Errorf("cognition panicked: %v", p)
		}
	}()
	return l.deps.Thinker.Think(ctx, w)
}

// commit writes the turn through the Journal and delivers its outbox entries — or, when
// the chat is in backoff, leaves them waiting behind its earlier ones.
func (l *Loop) commit(ctx context.Context, r *result, rec brain.TurnRecord, inBackoff bool) {
	if len(rec.Done) == 0 && len(rec.Turns) == 0 && len(rec.Outbox) == 0 && len(rec.Intents) == 0 && rec.Rel == nil {
		return
	}
	entries, err := l.deps.Journal.Commit(ctx, rec)
	if err != nil {
		l.log.Error("commit turn", "err", err)
		r.err = err
		return
	}
	l.m.outboxPending.Add(float64(len(entries)))
	if inBackoff {
		r.delivery = delivery{outcome: queuedBehind, left: entries}
		return
	}
	if err := l.deliver(ctx, &r.delivery, entries); err != nil {
		r.err = err
	}
}

// forModel is the wake cognition sees: w without the user messages whose media could not
// be read (they are answered by their notice alone, and still recorded). skip says nothing
// is left to think about: every user message of the wake was such a one.
func forModel(w brain.Wake) (mw brain.Wake, notices []brain.SendMessage, skip bool) {
	users, noticed := 0, 0
	for _, s := range w.Signals {
		if s.Type != brain.SignalUserMessage {
			continue
		}
		users++
		if s.Media != nil && s.Media.Notice != "" {
			noticed++
			notices = append(notices, brain.SendMessage{Chat: w.Chat, Text: s.Media.Notice, Kind: brain.KindSystem, ReplyTo: s.MessageID, Plain: true})
		}
	}
	if noticed == 0 {
		return w, nil, false
	}
	mw = w
	mw.Signals = make([]brain.Signal, 0, len(w.Signals)-noticed)
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage && s.Media != nil && s.Media.Notice != "" {
			continue
		}
		mw.Signals = append(mw.Signals, s)
	}
	return mw, notices, noticed == users
}
