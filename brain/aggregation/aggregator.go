// Package aggregation is the brain's gate between senses and thought: it folds signals into
// short windows (buckets), keeps the AckRegistry (handled, deferred, suppressed) and
// applies the wake rules of DESIGN §6 to decide which chats cognition must think about.
// Nothing here calls a model, and an idle tick allocates nothing.
package aggregation

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/anima-bot/anima/brain"
)

// LowEnergy is the energy below which nothing past the thought rule wakes cognition.
const LowEnergy = 0.2

// Options tunes the buckets.
type Options struct {
	// Window is the buckets' window (5 min).
	Window time.Duration
	// BucketTTL is how long a bucket lives without a signal (30 min).
	BucketTTL time.Duration
	// Registerer receives anima_proactive_suppressed_total (nil: not registered).
	Registerer prometheus.Registerer
}

// Aggregator is the aggregation layer. It is not safe for concurrent use: the core loop
// calls it from its own goroutine.
type Aggregator struct {
	cfg       brain.ProactivePolicy
	acks      *AckRegistry
	buckets   buckets
	lastPrune time.Time
	// held remembers, per chat, which gate last held back a due proactive contact, so
	// the suppression counter counts holds, not ticks.
	held       map[int64]gate
	suppressed [gateCount]prometheus.Counter
	// heldThought is held, for chats' gated thoughts (rule 4a).
	heldThought  map[int64]gate
	thoughtsHeld [gateCount]prometheus.Counter
}

// gate is a proactive gate that can hold back contact that is otherwise due.
type gate uint8

const (
	gateNone gate = iota
	gateCooldown
	gateQuietHours
	gateMaxPerDay
	gateDeferred
	gateSleep    // the user's inferred sleep (or, for a follow-up, the night)
	gateOffHours // waiting for the user's active hours
	gateEarly    // before the user's usual time of the day has passed without them, or their usual gap
	gateCount
)

var gateNames = [gateCount]string{"", "cooldown", "quiet_hours", "max_per_day", "deferred", "sleep", "off_hours", "early"}

var _ brain.Aggregator = (*Aggregator)(nil)

// New returns an aggregator applying the proactive policy cfg (as the configuration
// validated it); zero Options fields take their defaults.
func New(cfg brain.ProactivePolicy, opts Options) *Aggregator {
	if opts.Window <= 0 {
		opts.Window = 5 * time.Minute
	}
	if opts.BucketTTL <= 0 {
		opts.BucketTTL = 30 * time.Minute
	}
	a := &Aggregator{
		cfg:     cfg,
		acks:    NewAckRegistry(),
		buckets: newBuckets(opts.Window, opts.BucketTTL),
		held:    map[int64]gate{},

		heldThought: map[int64]gate{},
	}
	vec := promauto.With(opts.Registerer).NewCounterVec(prometheus.CounterOpts{Name: "anima_proactive_suppressed_total",
		Help: "Proactive contacts that were due but held back, by the gate that held them (counted once per hold)."},
		[]string{"reason"})
	for g := gateCooldown; g < gateCount; g++ {
		a.suppressed[g] = vec.WithLabelValues(gateNames[g])
	}
	held := promauto.With(opts.Registerer).NewCounterVec(prometheus.CounterOpts{Name: "anima_gated_thoughts_held_total",
		Help: "Gated thoughts (such as concern check-ins) that were due but held back, by the gate that held them (counted once per hold)."},
		[]string{"reason"})
	for g := gateCooldown; g < gateCount; g++ {
		a.thoughtsHeld[g] = held.WithLabelValues(gateNames[g])
	}
	return a
}

// hold records which gate (gateNone: none) holds back chat's due contact.
func (a *Aggregator) hold(chat int64, g gate) { holdIn(a.held, &a.suppressed, chat, g) }

// holdIn records in held which gate (gateNone: none) holds back chat, counting each new
// hold once in counts (not once per tick).
func holdIn(held map[int64]gate, counts *[gateCount]prometheus.Counter, chat int64, g gate) {
	if held[chat] == g {
		return
	}
	if g == gateNone {
		delete(held, chat)
		return
	}
	held[chat] = g
	counts[g].Inc()
}

// Ack implements brain.Aggregator (see AckRegistry.Ack).
func (a *Aggregator) Ack(ack brain.Ack) { a.acks.Ack(ack) }

// ClearChat implements brain.Aggregator.
func (a *Aggregator) ClearChat(chat int64) {
	a.acks.ClearChat(chat)
	delete(a.held, chat)
	delete(a.heldThought, chat)
}

// Acks implements brain.Aggregator.
func (a *Aggregator) Acks(now time.Time) []brain.Ack { return a.acks.Acks(now) }

// Registry returns the aggregator's AckRegistry.
func (a *Aggregator) Registry() *AckRegistry { return a.acks }

// Bucket returns the window summary of a signal type, source and chat at now.
func (a *Aggregator) Bucket(now time.Time, k BucketKey) (Bucket, bool) {
	return a.buckets.stats(now, k)
}

// Blocked reports whether the AckRegistry holds s back at now (its value counts for a
// deferral's override). Plugins and the core loop use it for signals the wake rules do not
// cover.
func (a *Aggregator) Blocked(now time.Time, s brain.Signal) bool {
	at := s.At
	if at.IsZero() {
		at = now
	}
	return a.acks.Blocked(now, s.Type, s.Chat, at, s.Value)
}

// Decide implements brain.Aggregator. Rules, first match wins per chat (DESIGN §6):
//
//  1. user_message and schedule_due signals always wake their chat. All such signals of
//     one chat in one call fold into a single wake (profile chat) whose reason is the
//     strongest present: user message, then schedule. A reaction wakes nothing: it is an
//     acknowledgement, which the Stepper carries to the chat's next wake. In a group
//     chat only one member's consecutive signals fold: a signal from another member
//     starts the chat's next wake, so every wake answers exactly one sender. Acks never
//     hold these back.
//  2. An unhandled thought wakes its chat (profile proactive), unless the chat is unknown,
//     a group or dormant; the core loop marks the chat's thoughts handled on dispatch.
//  3. With st.Energy below 0.2 nothing further wakes.
//     4a. Gated thoughts (anima's own initiative, such as a concern's check-in) wake their
//     chat (profile proactive, the thought's reason) only through the proactive gates
//     (see gated); a held thought stays pending.
//  4. Proactive contact (see proactive) for each relationship in st.Rels order.
//
// Decide never changes relationships: the core loop records a dispatched proactive wake
// with Relationship.MarkProactiveWake.
func (a *Aggregator) Decide(now time.Time, st *brain.State, sigs []brain.Signal, out []brain.Wake) []brain.Wake {
	a.acks.tick(now)
	if now.Sub(a.lastPrune) >= time.Minute || now.Before(a.lastPrune) {
		a.lastPrune = now
		a.acks.Prune(now)
		a.buckets.prune(now)
	}
	start := len(out)

	// Rule 1.
	for i := range sigs {
		s := &sigs[i]
		a.buckets.observe(now, s)
		switch s.Type {
		case brain.SignalUserMessage, brain.SignalScheduleDue:
		default:
			continue
		}
		w := findLast(out[start:], s.Chat)
		if w != nil && w.Rel.Group && w.User != s.User {
			// In a group every run answers one member: another member's signal starts
			// the chat's next wake, in order.
			w = nil
		}
		if w == nil {
			out = append(out, brain.Wake{Chat: s.Chat, User: s.User, Profile: brain.ProfileChat, At: now})
			w = &out[len(out)-1]
			rel := st.Rel(s.Chat)
			if rel != nil {
				w.Rel = *rel
				if w.User == 0 && !rel.Group {
					w.User = rel.User
				}
			}
			w.Loc = st.Location(rel)
		}
		w.Signals = append(w.Signals, *s)
	}
	for i := start; i < len(out); i++ {
		out[i].Reason = signalReason(&out[i])
	}

	// Rule 2.
	for i := range st.Thoughts {
		t := &st.Thoughts[i]
		if t.Handled || t.Gated || t.Chat == 0 {
			continue
		}
		rel := st.Rel(t.Chat)
		if rel == nil || rel.Group || rel.Dormant {
			continue
		}
		if w := find(out[start:], t.Chat); w != nil {
			if w.Reason.Code == brain.ReasonThought {
				w.Signals = append(w.Signals, thoughtSignal(t))
			}
			continue
		}
		out = append(out, brain.Wake{Chat: t.Chat, User: rel.User, Reason: brain.Reason{Code: brain.ReasonThought},
			Profile: brain.ProfileProactive, Rel: *rel, Loc: st.Location(rel), At: now, Signals: []brain.Signal{thoughtSignal(t)}})
	}
	for i := start; i < len(out); i++ {
		if w := &out[i]; w.Reason.Code == brain.ReasonThought {
			w.Reason = thoughtReason(w)
		}
	}

	// Rules 3 and 4.
	if st.Energy < LowEnergy || !a.cfg.Enabled || a.cfg.MaxPerDay == 0 {
		return out
	}
	out = a.decideGated(now, st, out, start)
	woken := len(out) > start
	for _, rel := range st.Rels {
		r, loc, ok := a.proactive(now, st, rel)
		if !ok || (woken && find(out[start:], rel.Chat) != nil) {
			continue
		}
		out = append(out, brain.Wake{Chat: rel.Chat, User: rel.User, Reason: r,
			Profile: brain.ProfileProactive, Rel: *rel, Loc: loc, At: now})
	}
	return out
}

// findLast returns the last wake of chat in ws, or nil.
func findLast(ws []brain.Wake, chat int64) *brain.Wake {
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].Chat == chat {
			return &ws[i]
		}
	}
	return nil
}

// find returns the first wake of chat in ws, or nil.
func find(ws []brain.Wake, chat int64) *brain.Wake {
	for i := range ws {
		if ws[i].Chat == chat {
			return &ws[i]
		}
	}
	return nil
}

func thoughtSignal(t *brain.Thought) brain.Signal {
	return brain.Signal{Type: brain.SignalThought, Source: "thought", Chat: t.Chat, Text: t.Text, At: t.At}
}
