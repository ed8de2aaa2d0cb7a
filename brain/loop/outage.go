package loop

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/anima-bot/anima/brain"
)

// OutageReporter is an optional extension of a Thinker: Outage says since when the model
// has been unreachable (ok false while it answers). It must be safe to call from any
// goroutine. The core loop releases held messages as soon as it reports the model back.
type OutageReporter interface {
	Outage() (since time.Time, ok bool)
}

// The rules of a model outage, per chat:
//
//   - A run answering user messages that fails with ErrModelUnavailable consumes nothing:
//     its messages stay in the store's inbox (so they survive a restart) and the chat is
//     held. The first time in an outage, the chat gets one short notice.
//   - A new user message in a held chat runs with the held ones folded in, oldest first;
//     such a run may probe the model (the Thinker decides whether it does).
//   - When a run succeeds and the Thinker no longer reports an outage — or a tick finds it
//     so — every held chat is released, in the order it was first held: one run per chat
//     answers all its waiting messages.
//   - While the outage lasts, the longest-held chat asks again (its run may probe): one
//     such retry at a time, HoldRetry after the hold began or the last retry ended, so a
//     user who wrote during the Thinker's probe gap gets the probe as the gap ends. After
//     the first minute of the hold the interval doubles per retry, up to HoldRetryMax.
//     The model is back at the latest one interval (and a tick) after it returns.
//   - Messages held longer than MaxHold are dropped (consumed unanswered), logged and
//     counted.

// heldChat is a chat whose user messages wait for the model.
type heldChat struct {
	wake    brain.Wake // reason, user and profile of the held run; Signals are the waiting messages
	seq     uint64     // the order chats were first held in
	running bool       // its messages are in a run now
}

// heldChats are the chats held while the model is unreachable, waiting for it. Owned by
// the loop goroutine.
type heldChats struct {
	chats     map[int64]*heldChat
	seq       uint64
	lastRetry time.Time     // when the last retry was made, or ended
	since     time.Time     // when the hold began
	every     time.Duration // the interval to the next retry
	retrying  int64         // the chat whose retry is in flight (0: none)
	gauge     prometheus.Gauge
	dropped   prometheus.Counter
}

func newHeldChats(reg prometheus.Registerer) heldChats {
	f := promauto.With(reg)
	return heldChats{
		chats: map[int64]*heldChat{},
		gauge: f.NewGauge(prometheus.GaugeOpts{Name: "anima_held_chats",
			Help: "Chats whose messages wait for the model to come back."}),
		dropped: f.NewCounter(prometheus.CounterOpts{Name: "anima_held_messages_dropped_total",
			Help: "User messages dropped unanswered after waiting longer than the hold limit for the model."}),
	}
}

// noticed reports whether chat was already told about the outage: it is held.
func (h *heldChats) noticed(chat int64) bool { return h.chats[chat] != nil }

// put holds the messages of a run that could not reach the model, ahead of any that
// arrived since.
func (h *heldChats) put(w brain.Wake) {
	c := h.chats[w.Chat]
	if c == nil {
		h.seq++
		c = &heldChat{seq: h.seq}
		h.chats[w.Chat] = c
		h.gauge.Set(float64(len(h.chats)))
	}
	sigs := append(slices.Clone(w.Signals), c.wake.Signals...)
	c.wake = w
	c.wake.Signals = sigs
	c.running = false
}

// take moves chat's held messages into w, a user-message run about to start, ahead of
// w's own. It reports false when w has nothing to answer.
func (h *heldChats) take(w *brain.Wake) bool {
	c := h.chats[w.Chat]
	if c != nil {
		w.Signals = append(c.wake.Signals, w.Signals...)
		c.wake.Signals = nil
		c.running = true
	}
	return len(w.Signals) > 0
}

// answered records that a run for chat got through to the model: its held messages were
// answered.
func (h *heldChats) answered(chat int64) {
	if c := h.chats[chat]; c != nil && len(c.wake.Signals) == 0 {
		delete(h.chats, chat)
		h.gauge.Set(float64(len(h.chats)))
	}
}

// order returns the held chats not running now, in the order they were first held.
func (h *heldChats) order() []int64 {
	var out []int64
	for chat, c := range h.chats {
		if !c.running {
			out = append(out, chat)
		}
	}
	slices.SortFunc(out, func(a, b int64) int { return int(h.chats[a].seq - h.chats[b].seq) })
	return out
}

// modelBack reports whether the Thinker says the model answers (a Thinker that does not
// report outages is taken to answer).
func (l *Loop) modelBack() bool {
	r, ok := l.deps.Thinker.(OutageReporter)
	if !ok {
		return true
	}
	_, down := r.Outage()
	return !down
}

// release queues a run for chat's held messages (taken when it starts).
func (l *Loop) release(ctx context.Context, chat int64) {
	c := l.held.chats[chat]
	w := brain.Wake{Chat: chat, User: c.wake.User, Reason: c.wake.Reason, Profile: c.wake.Profile, At: l.deps.Clock.Now()}
	if rel := l.st.Rel(chat); rel != nil {
		w.Rel = *rel
		w.Loc = l.st.Location(rel)
	} else {
		w.Rel = c.wake.Rel
		w.Loc = c.wake.Loc
	}
	c.running = true // until its run takes the messages
	l.dispatch(ctx, job{kind: jobWake, wake: w})
}

// releaseHeld releases every chat held by an outage, in the order they were first held.
func (l *Loop) releaseHeld(ctx context.Context) {
	order := l.held.order()
	if len(order) > 0 {
		l.log.Info("the model is back; answering held messages", "chats", len(order),
			"outage", l.deps.Clock.Now().Sub(l.held.since).Round(time.Second))
	}
	for _, chat := range order {
		l.release(ctx, chat)
	}
}

// holdTick drops messages held too long, and releases or retries the held chats.
func (l *Loop) holdTick(ctx context.Context, now time.Time) {
	if len(l.held.chats) == 0 {
		return
	}
	for _, chat := range l.held.order() {
		c := l.held.chats[chat]
		keep := c.wake.Signals[:0:0]
		var drop []uint64
		var expired []brain.Signal
		for _, s := range c.wake.Signals {
			if !s.At.IsZero() && now.Sub(s.At) > l.cfg.MaxHold {
				if s.ID != 0 {
					drop = append(drop, s.ID)
					expired = append(expired, s)
				}
				continue
			}
			keep = append(keep, s)
		}
		if n := len(c.wake.Signals) - len(keep); n > 0 {
			l.log.Warn("held messages dropped unanswered: the model was unreachable for longer than the hold limit",
				"chat", chat, "messages", n, "max_hold", l.cfg.MaxHold)
			l.held.dropped.Add(float64(n))
			c.wake.Signals = keep
			if len(drop) > 0 {
				dead := &brain.DeadLetter{Kind: brain.DeadHoldExpired, Chat: chat, User: c.wake.User, At: now,
					Reason: "the model was unreachable for longer than the hold limit (" + l.cfg.MaxHold.String() + ")", Signals: expired}
				l.dispatch(ctx, job{kind: jobDrop, drop: brain.TurnRecord{Chat: chat, Done: drop, At: now}, dead: dead})
			}
		}
		if len(c.wake.Signals) == 0 {
			delete(l.held.chats, chat)
			l.held.gauge.Set(float64(len(l.held.chats)))
		}
	}
	switch order := l.held.order(); {
	case len(order) == 0:
	case l.modelBack():
		l.releaseHeld(ctx)
	case l.held.retryInFlight() && now.Sub(l.held.lastRetry) < l.cfg.HoldRetryMax:
		// Wait for it (but not behind a chat whose queue is stuck for long).
	case now.Sub(l.held.lastRetry) >= l.held.every:
		// Still down: the longest-held chat asks again (its run may probe).
		l.held.lastRetry, l.held.retrying = now, order[0]
		if now.Sub(l.held.since) >= time.Minute {
			l.held.every = min(2*l.held.every, l.cfg.HoldRetryMax)
		}
		l.release(ctx, order[0])
	}
}

// retryInFlight reports whether a retry's run has not ended yet.
func (h *heldChats) retryInFlight() bool {
	c := h.chats[h.retrying]
	return h.retrying != 0 && c != nil && c.running
}

// settleHeld applies a finished job to the held chats: a run that could not reach the
// model holds its messages; one that went through releases every held chat once the model
// is back.
func (l *Loop) settleHeld(ctx context.Context, r result) {
	retried := l.held.retrying != 0 && r.chat == l.held.retrying
	if retried {
		l.held.retrying = 0
	}
	if r.held != nil {
		now := l.deps.Clock.Now()
		if len(l.held.chats) == 0 {
			// The first retry comes HoldRetry from now.
			l.held.since, l.held.lastRetry, l.held.every = now, now, l.cfg.HoldRetry
		}
		if retried {
			// The next comes an interval after this one ended, as the Thinker counts its
			// probe gap from a failed probe.
			l.held.lastRetry = now
		}
		l.held.put(*r.held)
		return
	}
	if c := l.held.chats[r.chat]; c != nil && c.running {
		// Its messages were in the run (answered, or given the apology).
		c.running = false
		l.held.answered(r.chat)
	}
	if r.thought && len(l.held.chats) > 0 && l.modelBack() {
		l.releaseHeld(ctx)
	}
}

// dropHeld forgets a forgotten chat's held messages: the handler deleted the chat, so
// they are consumed unanswered.
func (l *Loop) dropHeld(ctx context.Context, chat int64) {
	c := l.held.chats[chat]
	if c == nil {
		return
	}
	var ids []uint64
	for _, s := range c.wake.Signals {
		if s.ID != 0 {
			ids = append(ids, s.ID)
		}
	}
	delete(l.held.chats, chat)
	l.held.gauge.Set(float64(len(l.held.chats)))
	if len(ids) > 0 {
		l.dispatch(ctx, job{kind: jobDrop, drop: brain.TurnRecord{Chat: chat, Done: ids, At: l.deps.Clock.Now()}})
	}
}
