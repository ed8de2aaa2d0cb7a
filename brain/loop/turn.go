package loop

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

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
		// The relationship and its zone as they stand now, not as the wake copied them when
		// it was stepped: a command that landed since (/voice, /timezone) counts, in the run
		// and in what its turn writes back (a proactive turn's relationship).
		if view.Rel.Chat == chat {
			j.wake.Rel, j.wake.Loc = view.Rel, view.Loc
		}
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
	done, asked, replyTo := consumed(w.Signals)
	w, out, notices, err := l.runCognition(ctx, r, w, asked)
	now := l.deps.Clock.Now()
	rec := brain.TurnRecord{Done: done, Chat: w.Chat, User: w.User, Turns: userTurns(w.Signals, now), At: now}
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
		l.runFailed(w, now, err)
		if !asked {
			// Nobody is waiting for an answer; the signals are consumed.
			rec.Turns = nil
			l.commit(ctx, r, rec, inBackoff)
			return
		}
		out = l.apology(w.Chat, replyTo)
	}
	r.thought = err == nil
	r.status = out.Status
	l.record(&rec, w, out.Intents, notices)
	l.speak(ctx, &rec, w)
	l.proactiveOutcome(r, &rec, w)
	r.intents = rec.Intents
	l.commit(ctx, r, rec, inBackoff)
	if err == nil {
		l.logSent(w, out, rec, r.delivery)
	}
	l.maintain(ctx, r, w.Chat, rec)
}

// logSent writes the one INFO line of a turn whose model run sent messages (LogReplies):
// the chat and user, the first message's kind, the wake's reason, the model, the time
// since the earliest update it answers arrived (absent when it answers none), the tokens
// and requests of the run, and whether it went out now (false: it waits in the outbox
// for a retry). Never the text.
func (l *Loop) logSent(w brain.Wake, out brain.Outcome, rec brain.TurnRecord, d delivery) {
	if !l.cfg.LogReplies || len(rec.Outbox) == 0 {
		return
	}
	attrs := []any{"chat", w.Chat, "user", w.User, "kind", rec.Outbox[0].Kind, "reason", w.Reason.Code,
		"model", out.Model}
	if at := arrival(w.Signals); !at.IsZero() {
		attrs = append(attrs, "latency", max(l.deps.Clock.Now().Sub(at), 0).Round(time.Millisecond))
	}
	attrs = append(attrs, "tokens", out.Tokens, "requests", out.Requests, "messages", len(rec.Outbox),
		"delivered", d.outcome == delivered && len(d.sent) > 0)
	l.log.Info("sent", attrs...)
}

// consumed reads a wake's signals: the inbox entries its turn consumes, whether a user
// message is among them (someone waits for the answer), and the last one's message ID,
// which a notice or an apology replies to.
func consumed(sigs []brain.Signal) (done []uint64, asked bool, replyTo int) {
	for _, s := range sigs {
		if s.ID != 0 {
			done = append(done, s.ID)
		}
		if s.Type == brain.SignalUserMessage {
			asked, replyTo = true, s.MessageID
		}
	}
	return done, asked, replyTo
}

// runCognition runs cognition on w, with the typing indicator and drafts showing while
// someone waits for the answer (asked). It returns the wake as the run saw it — with its
// Drafter and perceived media, as the chat's held wake keeps it —, the outcome, and the
// notices of user messages whose media could not be read (answered by the notice alone).
func (l *Loop) runCognition(ctx context.Context, r *result, w brain.Wake, asked bool) (brain.Wake, brain.Outcome, []brain.SendMessage, error) {
	stop := func() {}
	if asked {
		stop = l.showProgress(ctx, &w)
	}
	w = l.perceive(ctx, w)
	mw, notices, skip := forModel(w)
	r.thinking = true
	var (
		out brain.Outcome
		err error
	)
	if !skip {
		out, err = l.safeThink(ctx, mw)
	}
	stop()
	return w, out, notices, err
}

// showProgress starts the typing indicator and, in a private chat when the loop has a
// Drafter, the drafts of the answer (on w.Drafter); stop ends both.
func (l *Loop) showProgress(ctx context.Context, w *brain.Wake) (stop func()) {
	stopTyping, stopDrafts := l.typing(ctx, w.Chat), func() {}
	if l.deps.Drafter != nil && !w.Rel.Group {
		w.Drafter, stopDrafts = startDrafts(ctx, l.deps.Drafter, l.cfg.TypingDelay, &l.wg)
	}
	return func() {
		stopTyping()
		stopDrafts()
	}
}

// userTurns is the history the wake's user messages add, each at its arrival (now when
// that is unknown).
func userTurns(sigs []brain.Signal, now time.Time) []brain.Turn {
	var turns []brain.Turn
	for _, s := range sigs {
		if s.Type == brain.SignalUserMessage {
			at := s.At
			if at.IsZero() {
				at = now
			}
			turns = append(turns, brain.Turn{Role: "user", Text: s.Text, At: at, User: s.User, Name: s.UserName})
		}
	}
	return turns
}

// runFailed logs a cognition run that failed for good and keeps its recorded signals as a
// dead letter.
func (l *Loop) runFailed(w brain.Wake, at time.Time, err error) {
	l.log.Error("cognition failed", "reason", w.Reason.Code, "err", err)
	if sigs := recorded(w.Signals); len(sigs) > 0 {
		l.bury(brain.DeadLetter{Kind: brain.DeadRunFailed, Chat: w.Chat, User: w.User, At: at, Reason: err.Error(), Signals: sigs})
	}
}

// apology is the outcome that answers a user whose run failed.
func (l *Loop) apology(chat int64, replyTo int) brain.Outcome {
	return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: chat, Text: l.cfg.Apology, Kind: brain.KindSystem, ReplyTo: replyTo, Plain: true}}}
}

// record adds an outcome to the turn: its messages after the notices (outbox and history,
// stamped with the wake's arrival) and its intents with lasting effects.
func (l *Loop) record(rec *brain.TurnRecord, w brain.Wake, intents []brain.Intent, notices []brain.SendMessage) {
	msgs, known := l.sortIntents(intents)
	msgs = append(notices, msgs...)
	rec.Intents = known
	l.answer(rec, w, msgs)
	stampArrival(rec.Outbox, w.Signals...)
}

// proactiveOutcome counts whether a proactive or follow-up wake wrote or stayed silent,
// and records the relationship as the wake saw it (its proactive bookkeeping).
func (l *Loop) proactiveOutcome(r *result, rec *brain.TurnRecord, w brain.Wake) {
	if w.Reason.Code != brain.ReasonProactive && w.Reason.Code != brain.ReasonFollowup {
		return
	}
	if len(rec.Outbox) == 0 {
		r.silent = true
		l.m.proactive.WithLabelValues("silent").Inc()
	} else {
		l.m.proactive.WithLabelValues("sent").Inc()
	}
	rel := w.Rel
	rec.Rel = &rel
}

// maintain runs the Journal's memory upkeep for chat after a committed turn that added
// history.
func (l *Loop) maintain(ctx context.Context, r *result, chat int64, rec brain.TurnRecord) {
	if m, ok := l.deps.Journal.(Maintainer); ok && len(rec.Turns) > 0 && r.err == nil {
		if err := m.Maintain(ctx, chat); err != nil && ctx.Err() == nil {
			l.log.Warn("memory upkeep", "err", err)
		}
	}
}

// holdForModel leaves the messages of a run that could not reach the model in the inbox
// (nothing of the turn is committed) for the loop to hold, and tells the user once per
// outage that they will be answered.
func (l *Loop) holdForModel(ctx context.Context, r *result, w brain.Wake, replyTo int, inBackoff, noticed bool) {
	r.held = &w
	if noticed { // held again on a retry or a new message: said when it was first held
		l.log.Debug("still holding messages for the model", "chat", w.Chat, "messages", len(w.Signals))
		return
	}
	l.log.Warn("the model is unreachable; messages held until it is back", "chat", w.Chat, "messages", len(w.Signals))
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
	if l.deps.Tools != nil {
		l.deps.Tools.AwaitTools(ctx) // off the tick: in the chat's run
	}
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
