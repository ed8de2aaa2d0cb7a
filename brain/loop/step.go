package loop

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Stepper is the part of the brain that runs on every tick and every arrival, without
// I/O: it takes in signals, runs the autonomic and aggregation layers over the state and
// books the wakes they decide into their relationships. The Loop runs one and hands
// the wakes to cognition; tests drive one alone (the simulator drives the whole Loop
// through Drive). It is not safe for concurrent use.
type Stepper struct {
	st      *brain.State
	auto    brain.Autonomic // may be nil
	agg     brain.Aggregator
	log     *slog.Logger
	logText bool
	m       *stepMetrics

	sigBuf  []brain.Signal
	wakeBuf []brain.Wake
	// acks are, per chat, the reactions to anima's messages that no run has seen yet
	// (see acknowledge): the latest maxPendingReactions.
	acks map[int64][]brain.Signal
	// superseded are, per chat, the inbox ids of the reactions the last Step pushed out of
	// acks; the loop consumes them (see dropSuperseded).
	superseded map[int64][]uint64
	// changed is what the steps changed in the state, for the loop's persister.
	changed *changes
	// busy reports whether a chat has a job running or queued (nil: none ever has).
	busy func(chat int64) bool
}

// StepperDeps are a Stepper's state and layers. Nil optional ones become no-ops.
type StepperDeps struct {
	State      *brain.State    // default NewState(nil)
	Autonomic  brain.Autonomic // optional
	Aggregator brain.Aggregator
	// LogText logs signal texts and wake reasons that may quote the user at debug level
	// (off by default: texts are private).
	LogText    bool
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// NewStepper returns a Stepper over deps.
func NewStepper(deps StepperDeps) *Stepper {
	if deps.State == nil {
		deps.State = brain.NewState(nil)
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Stepper{
		st:         deps.State,
		auto:       deps.Autonomic,
		agg:        deps.Aggregator,
		log:        log.With("component", "brain"),
		logText:    deps.LogText,
		m:          newStepMetrics(deps.Registerer),
		changed:    newChanges(),
		acks:       map[int64][]brain.Signal{},
		superseded: map[int64][]uint64{},
	}
}

// Step runs one step of the layers at now over sigs (recorded signals; commands are
// observed but left to the caller) and returns the wakes to dispatch. The returned slice
// is reused by the next Step.
func (s *Stepper) Step(now time.Time, sigs []brain.Signal) []brain.Wake {
	s.observe(now, sigs)
	s.sigBuf = s.sigBuf[:0]
	if s.auto != nil {
		s.sigBuf = s.auto.Sense(now, s.st, s.sigBuf)
	}
	for _, sig := range s.sigBuf {
		s.m.signal(sig.Type)
		if sig.Type == brain.SignalThought && sig.Chat != 0 && sig.Text != "" {
			// A neuron (a plugin's, say) has something to think about: it becomes a
			// pending thought, which wakes cognition for the chat.
			s.st.Thoughts = append(s.st.Thoughts, brain.Thought{Chat: sig.Chat, Text: sig.Text, At: sig.At})
		}
		if sig.Type == brain.SignalThoughtPressure && sig.Chat != 0 && sig.Text != "" {
			// Thought pressure from a plugin: anima's own initiative, which wakes cognition
			// only through the proactive gates (the aggregator's gated-thought rule).
			reason := sig.Detail
			if reason == "" {
				reason = brain.ReasonThought
			}
			s.st.Thoughts = append(s.st.Thoughts, brain.Thought{Chat: sig.Chat, Text: sig.Text, At: sig.At,
				Gated: true, Reason: reason, Ref: sig.Ref})
		}
	}
	clear(s.superseded)
	for _, sig := range sigs {
		if sig.Type != brain.SignalCommand {
			s.sigBuf = append(s.sigBuf, sig)
		}
		if sig.Type == brain.SignalReaction {
			s.pend(sig)
		}
	}
	s.wakeBuf = s.deferBusy(s.agg.Decide(now, s.st, s.sigBuf, s.wakeBuf[:0]))
	for i := range s.wakeBuf {
		s.bookkeep(now, &s.wakeBuf[i])
	}
	return s.wakeBuf
}

// deferBusy leaves out of ws the wakes anima's own initiative makes (profile proactive)
// for a chat with a job running or queued: a chat anima is answering, reminding or
// delivering to is not one it misses. Nothing is recorded for them (no cooldown, no
// day's count, no thought handled); a later step decides again on the state the job
// leaves, when its answer has ended the silence. Without it, a message taken in hours
// after it was written (anima was down) looked like hours of silence until its answer
// went out, and a proactive run queued behind the answer.
func (s *Stepper) deferBusy(ws []brain.Wake) []brain.Wake {
	if s.busy == nil {
		return ws
	}
	return slices.DeleteFunc(ws, func(w brain.Wake) bool {
		return w.Profile == brain.ProfileProactive && s.busy(w.Chat)
	})
}

// The rules of a reaction (to a message anima sent; the channel drops the others):
//
//   - It wakes nothing: no model run is spent on it alone.
//   - It counts as the user answering (observe): the silence, habituation, the
//     unanswered proactive count, the follow-up and the conversation status start over.
//   - The chat's next wake, whatever its reason, carries it among its signals, so the run
//     reads it as data and its turn consumes it from the store's inbox. Until then it
//     stays there, and a restart submits it again like any unprocessed signal.
//   - A chat keeps its latest maxPendingReactions: an older one is superseded, consumed
//     from the inbox unread (the loop commits a drop for it), so a user who reacts
//     without ever writing grows neither the Stepper's memory nor the store's inbox.
//   - A chat without a relationship (forgotten: /forget removed it) has no next wake to
//     carry a reaction: it is consumed unread at once. Kept in the inbox, it stayed there
//     for good, quoting anima's message, and every restart submitted it again.
//   - A forgotten chat's pending reactions are consumed unread too (Loop.forget).

// maxPendingReactions is how many reactions a chat keeps for its next wake.
const maxPendingReactions = 20

// pend keeps a reaction for its chat's next wake, superseding the oldest beyond
// maxPendingReactions; in a chat without a relationship it is superseded at once.
func (s *Stepper) pend(sig brain.Signal) {
	if s.st.Rel(sig.Chat) == nil {
		if sig.ID != 0 {
			s.superseded[sig.Chat] = append(s.superseded[sig.Chat], sig.ID)
		}
		s.m.reactionsDropped.Inc()
		return
	}
	acks := append(s.acks[sig.Chat], sig)
	if n := len(acks) - maxPendingReactions; n > 0 {
		for _, old := range acks[:n] {
			if old.ID != 0 {
				s.superseded[sig.Chat] = append(s.superseded[sig.Chat], old.ID)
			}
		}
		s.m.reactionsDropped.Add(float64(n))
		acks = slices.Delete(acks, 0, n)
	}
	s.acks[sig.Chat] = acks
}

// dropSuperseded consumes the reactions the last Step superseded: one drop per chat,
// ahead of the chat's queued jobs (it answers nothing, and a wake queued last must stay
// one that later messages fold into), merged into a drop already waiting there.
func (l *Loop) dropSuperseded(ctx context.Context, now time.Time) {
	for chat, ids := range l.stepper.superseded {
		q := l.queue(chat)
		if len(q.jobs) > 0 && q.jobs[0].kind == jobDrop && q.jobs[0].dead == nil {
			q.jobs[0].drop.Done = append(q.jobs[0].drop.Done, ids...)
			continue
		}
		q.jobs = slices.Insert(q.jobs, 0, job{kind: jobDrop, drop: brain.TurnRecord{Chat: chat, Done: ids, At: now}})
		l.startNext(ctx, chat)
	}
}

// acknowledge moves chat's pending reactions into w, the chat's next wake.
func (s *Stepper) acknowledge(w *brain.Wake) {
	if acks := s.acks[w.Chat]; len(acks) > 0 {
		w.Signals = append(w.Signals, acks...)
		delete(s.acks, w.Chat)
	}
}

// forget drops chat's pending reactions (the chat was forgotten) and returns their inbox
// ids, for the loop to consume.
func (s *Stepper) forget(chat int64) []uint64 {
	var ids []uint64
	for _, sig := range s.acks[chat] {
		if sig.ID != 0 {
			ids = append(ids, sig.ID)
		}
	}
	delete(s.acks, chat)
	return ids
}

// observe updates relationships for incoming signals.
func (s *Stepper) observe(now time.Time, sigs []brain.Signal) {
	for _, sig := range sigs {
		s.m.signal(sig.Type)
		if s.logText && sig.Text != "" {
			s.log.Debug("signal", "type", sig.Type, "text", sig.Text)
		}
		if sig.Chat == 0 {
			continue
		}
		rel := s.st.Rel(sig.Chat)
		if rel == nil {
			if sig.Type != brain.SignalUserMessage && sig.Type != brain.SignalCommand {
				continue
			}
			rel = s.st.Upsert(brain.Relationship{Chat: sig.Chat, User: sig.User, Group: sig.User != 0 && sig.User != sig.Chat})
		}
		if sig.UserName != "" && !rel.Group {
			rel.Name = sig.UserName
		}
		// A message or reaction ends the silence, habituation and the user's acks; a
		// command does not (/quiet followed by /status must keep the quiet).
		if sig.Type == brain.SignalUserMessage || sig.Type == brain.SignalReaction {
			at := sig.At
			if at.IsZero() || at.After(now) {
				at = now
			}
			if loc := s.st.Location(rel); sig.Type == brain.SignalUserMessage && !rel.Group && rel.OwnMessage(at, loc) {
				rel.Rhythm.Observe(at, loc)
			}
			rel.MarkUserMessage(at)
			// The user wrote first: the chat's run carries its due gated thoughts (the
			// plugin's context section names them), so they no longer wait for the gates.
			if sig.Type == brain.SignalUserMessage {
				forgetGated(s.st, sig.Chat)
			}
			s.agg.ClearChat(sig.Chat)
			s.changed.acks = true
			if at.After(s.st.LastActivity) {
				s.st.LastActivity = at
			}
		}
		s.changed.rels[sig.Chat] = true
	}
}

// bookkeep records a dispatched wake in its relationship and snapshots the relationship
// into the wake.
func (s *Stepper) bookkeep(now time.Time, w *brain.Wake) {
	s.m.wakes.WithLabelValues(w.Reason.Code).Inc()
	lvl := slog.LevelInfo
	if w.Reason.Code == brain.ReasonUserMessage {
		lvl = slog.LevelDebug // one per message: too many for info
	}
	if s.log.Enabled(context.Background(), lvl) {
		// The reason's sentence may quote the user (a reminder's note): only with LogText.
		attrs := []any{"reason", w.Reason.Code}
		if s.logText {
			attrs = append(attrs, "why", w.Reason.Text)
		}
		s.log.Log(context.Background(), lvl, "cognition wake", attrs...)
	}
	rel := s.st.Rel(w.Chat)
	if rel == nil {
		return
	}
	switch {
	case w.Gated:
		// Gated thoughts passed the proactive gates: this is proactive contact, counted
		// against the cooldown and the daily cap like any other; the wake carries them.
		rel.MarkProactiveWake(now, s.st.Location(rel), false)
		w.Profile = brain.ProfileProactive
		s.changed.rels[w.Chat] = true
		forgetThoughts(s.st, w.Chat)
	case w.Reason.Code == brain.ReasonProactive, w.Reason.Code == brain.ReasonFollowup:
		rel.MarkProactiveWake(now, s.st.Location(rel), w.Reason.Code == brain.ReasonFollowup)
		w.Profile = brain.ProfileProactive
		s.changed.rels[w.Chat] = true
	case w.Reason.Code == brain.ReasonThought:
		// The wake carries the thoughts (as signals); the state need not keep them.
		forgetThoughts(s.st, w.Chat)
	}
	if w.Profile == "" {
		w.Profile = brain.ProfileChat
	}
	if w.User == 0 && !rel.Group {
		// A group's relationship is not one person's: its User is only its first sender.
		w.User = rel.User
	}
	if w.At.IsZero() {
		w.At = now
	}
	w.Rel = *rel
	w.Signals = append([]brain.Signal(nil), w.Signals...)
	s.acknowledge(w)
}

// forgetGated drops chat's pending gated thoughts.
func forgetGated(st *brain.State, chat int64) {
	if len(st.Thoughts) == 0 {
		return
	}
	kept := st.Thoughts[:0]
	for _, t := range st.Thoughts {
		if t.Chat != chat || !t.Gated {
			kept = append(kept, t)
		}
	}
	st.Thoughts = kept
}

// forgetThoughts drops chat's pending thoughts.
func forgetThoughts(st *brain.State, chat int64) {
	kept := st.Thoughts[:0]
	for _, t := range st.Thoughts {
		if t.Chat != chat {
			kept = append(kept, t)
		}
	}
	st.Thoughts = kept
}
