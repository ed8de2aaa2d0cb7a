package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
)

// sortIntents splits a turn's intents: messages go to the outbox, intents of a known kind
// stay with the turn, and intents of a kind HomeOf does not know are logged, counted and
// dropped.
func (l *Loop) sortIntents(intents []brain.Intent) (msgs []brain.SendMessage, known []brain.Intent) {
	for _, in := range intents {
		if m, ok := in.(brain.SendMessage); ok {
			msgs = append(msgs, m)
			continue
		}
		if brain.HomeOf(in) == 0 {
			l.unhandled(in)
			continue
		}
		known = append(known, in)
	}
	return msgs, known
}

// unhandled logs and counts an intent nobody applies.
func (l *Loop) unhandled(in brain.Intent) {
	name := "nil"
	if in != nil {
		name = in.IntentName()
	}
	l.log.Error("intent of a kind nobody applies; dropped", "intent", name)
	l.m.intentsUnhandled.WithLabelValues(name).Inc()
}

// applyInLoop applies an InLoop intent to the loop's state.
func (l *Loop) applyInLoop(in brain.Intent) {
	now := l.deps.Clock.Now()
	switch v := in.(type) {
	case brain.Defer:
		until := v.Until
		if max := now.Add(24 * time.Hour); until.After(max) {
			until = max
		}
		l.deps.Aggregator.Ack(brain.Ack{Key: brain.AckKey(brain.SignalSocialPressure, v.Chat), Kind: brain.AckDeferred, Until: until,
			Firm: true, Reason: v.Reason, At: now})
		l.changed.acks = true
	case brain.Ack:
		l.deps.Aggregator.Ack(v)
		l.changed.acks = true
	case brain.EmitThought:
		l.st.Thoughts = append(l.st.Thoughts, brain.Thought{Chat: v.Chat, Text: v.Text, At: now})
	case brain.SetTimezone:
		if rel := l.st.Rel(v.Chat); rel != nil {
			rel.Timezone = v.Zone
			l.changed.rels[v.Chat] = true
		}
	case brain.SetVoice:
		if rel := l.st.Rel(v.Chat); rel != nil {
			if v.Group {
				rel.GroupVoice = v.On
			} else {
				rel.SetVoicePref(v.User, v.Pref)
			}
			l.changed.rels[v.Chat] = true
		}
	case brain.SetSelfNote:
		if rel := l.st.Rel(v.Chat); rel != nil {
			rel.SetNote(v.Note)
			l.changed.rels[v.Chat] = true
		}
	case brain.ShareLater:
		if rel := l.st.Rel(v.Chat); rel != nil {
			rel.AddShare(v.Share, now)
			l.changed.rels[v.Chat] = true
		}
	case brain.ShareUsed:
		if rel := l.st.Rel(v.Chat); rel != nil && rel.UseShare(v.ID) {
			l.changed.rels[v.Chat] = true
		}
	case brain.UpdateState:
		l.st.Energy = clamp01(l.st.Energy + v.EnergyDelta)
		l.st.Alertness = clamp01(l.st.Alertness + v.AlertnessDelta)
	default:
		// HomeOf says InLoop, but no case here applies it.
		l.unhandled(in)
	}
}

// Apply hands the loop intents made outside it — a plugin job's run, such as the dream
// rewriting anima's self note — whose InLoop part the loop applies to its state as it does
// a turn's (under Run, or at the next Drive). Other intents are the caller's to commit. It
// returns ErrStopped once Run has stopped (what it took before is applied and persisted
// by the stop), and ctx's error if the loop does not take them before ctx ends.
func (l *Loop) Apply(ctx context.Context, intents []brain.Intent) error {
	select {
	case <-l.stopped:
		return ErrStopped
	default:
	}
	select {
	case l.applied <- intents:
		return nil
	case <-l.stopped:
		return ErrStopped
	case <-ctx.Done():
		return fmt.Errorf("apply intents: %w", ctx.Err())
	}
}

// ErrStopped is Apply's answer once the loop's Run has stopped.
var ErrStopped = errors.New("core loop stopped")

// applyOutside applies the InLoop intents Apply handed over.
func (l *Loop) applyOutside(intents []brain.Intent) {
	for _, in := range intents {
		if brain.HomeOf(in)&brain.InLoop != 0 {
			l.applyInLoop(in)
		}
	}
}

func clamp01(v float64) float64 { return min(1, max(0, v)) }
