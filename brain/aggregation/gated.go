package aggregation

import (
	"fmt"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// This file holds rule 4a, gated thoughts: anima's own initiative (a plugin's thought
// pressure, such as a concern's check-in) that wakes cognition only when every proactive
// gate lets it.

// gated applies the proactive gates to a chat with pending gated thoughts: the chat is
// known, not a group and not dormant; the cooldown since the last proactive contact has
// passed; it is not inside quiet hours in the user's zone (nor just past their jittered
// end, nor in the hour after them unless the user has been seen then); fewer than MaxPerDay proactive wakes today (a check-in may take the last one); no
// deferral or suppression of ProactiveKey(chat) (firm or not); and, once the user's
// rhythm is Ready, not in their inferred sleep and inside their active hours unless none
// comes within a day (timing.go); and not just before they usually come on their own
// (preempts). Unlike
// rule 4 it needs no silence: the thought is the reason. A gate that holds only delays the
// thought: it stays pending.
func (a *Aggregator) gated(now time.Time, st *brain.State, rel *brain.Relationship) (*time.Location, bool) {
	if rel == nil || rel.Group || rel.Dormant {
		return nil, false
	}
	loc := st.Location(rel)
	u := a.jitterU(rel)
	g := gateNone
	switch {
	case now.Before(a.cooledAt(rel, u)):
		g = gateCooldown
	case a.quiet(now, rel, loc, u):
		g = gateQuietHours
	case a.capped(rel, now.In(loc), 0):
		g = gateMaxPerDay
	case a.deferred(now, rel.Chat):
		g = gateDeferred
	case a.asleep(now, rel, loc, u, false):
		g = gateSleep
	case a.offHours(now, rel, loc, u, patience, true):
		g = gateOffHours
	case a.preempts(now, rel, loc, u):
		g = gateEarly
	}
	a.holdThought(rel.Chat, g)
	return loc, g == gateNone
}

// deferred reports whether proactive contact with chat is deferred or suppressed at now. A
// handled ack (the model chose silence for this stretch) does not hold a gated thought: the
// thought is news since.
func (a *Aggregator) deferred(now time.Time, chat int64) bool {
	ack, ok := a.acks.m[ackKey{typ: brain.SignalSocialPressure, chat: chat}]
	if !ok || expired(ack, now) {
		return false
	}
	return ack.Kind == brain.AckDeferred || ack.Kind == brain.AckSuppressed
}

// holdThought records which gate (gateNone: none) holds back chat's gated thoughts, and
// counts each new hold.
func (a *Aggregator) holdThought(chat int64, g gate) { holdIn(a.heldThought, &a.thoughtsHeld, chat, g) }

// decideGated appends one wake per chat with pending gated thoughts that pass the gates
// (chats already woken in this call are left alone: their run carries the thoughts).
func (a *Aggregator) decideGated(now time.Time, st *brain.State, out []brain.Wake, start int) []brain.Wake {
	for i := range st.Thoughts {
		t := &st.Thoughts[i]
		if !t.Gated || t.Handled || t.Chat == 0 {
			continue
		}
		if w := find(out[start:], t.Chat); w != nil {
			if w.Gated {
				w.Signals = append(w.Signals, gatedSignal(t))
			}
			continue
		}
		rel := st.Rel(t.Chat)
		if rel != nil && now.Before(t.At.Add(a.late(a.jitterU(rel)))) {
			continue // a thought is taken up a jittered while after it came due, never on its minute
		}
		loc, ok := a.gated(now, st, rel)
		if !ok {
			continue
		}
		out = append(out, brain.Wake{Chat: t.Chat, User: rel.User, Reason: brain.Reason{Code: t.Reason},
			Profile: brain.ProfileProactive, Gated: true, Rel: *rel, Loc: loc, At: now,
			Signals: []brain.Signal{gatedSignal(t)}})
	}
	for i := start; i < len(out); i++ {
		if w := &out[i]; w.Gated {
			w.Reason = gatedReason(w)
		}
	}
	return out
}

func gatedSignal(t *brain.Thought) brain.Signal {
	return brain.Signal{Type: brain.SignalThoughtPressure, Source: "thought", Chat: t.Chat, Text: t.Text,
		Ref: t.Ref, Detail: t.Reason, At: t.At}
}

// gatedReason names what the gated thoughts are about.
func gatedReason(w *brain.Wake) brain.Reason {
	texts := make([]string, 0, len(w.Signals))
	for _, s := range w.Signals {
		texts = append(texts, s.Text)
	}
	what := "something on my mind"
	if w.Reason.Code == brain.ReasonConcernCheckin {
		what = "a check-in I planned"
	}
	return brain.Reason{Code: w.Reason.Code, Text: fmt.Sprintf("%s is due: %s", what, strings.Join(texts, "; "))}
}
