package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// turn runs cognition for one wake and does with its outcome what the core loop does
// (brain/loop/turn.go's think, then the finish in brain/loop/queue.go), in simulated time and
// without concurrency: the turn is committed through the journal (inbox entries
// consumed, history, search index, outbox, relationship), its messages are delivered to
// the scripted user and removed from the outbox, and the relationship records them.
func (s *scenarioSim) turn(ctx context.Context, w brain.Wake, row *simRow) error {
	row.wakes = append(row.wakes, w.Reason.Code)
	proactive := w.Reason.Code == brain.ReasonProactive || w.Reason.Code == brain.ReasonFollowup
	checkin := w.Reason.Code == brain.ReasonConcernCheckin
	var first simSend // what the figures record if a message goes out
	if proactive || checkin {
		s.tl.proactiveWake(s.clock.now, w.Reason)
		first = simSend{at: s.clock.now, code: w.Reason.Code,
			trigger: trigger(s.tl.pol, w, s.clock.now, s.tl.prevWake, s.tl.loc),
			ready:   w.Rel.Rhythm.Ready(), live: w.Rel.Rhythm.Active(s.clock.now, s.tl.loc)}
		s.tl.prevWake = s.clock.now
		for _, sig := range w.Signals {
			if checkin && sig.Ref != "" {
				first.ref = sig.Ref
				s.tl.checkinWoken[sig.Ref] = true
				if due, ok := s.tl.due[sig.Ref]; !ok || sig.At.Before(due) {
					s.tl.due[sig.Ref] = sig.At
				}
			}
		}
	}
	calls, sums := s.model.requests()
	defer func() {
		c, m := s.model.requests()
		row.modelCalls += c - calls + m - sums
	}()
	s.model.prepare(w, s.clock.now, s.user.day(s.clock.now))
	out, thinkErr := s.think.Think(ctx, w)
	if thinkErr != nil && ctx.Err() != nil {
		return thinkErr
	}
	s.st.LLMWork++

	now := s.clock.now
	rec := brain.TurnRecord{Chat: w.Chat, User: w.User, At: now}
	asked := false
	for _, sig := range w.Signals {
		if sig.ID != 0 {
			rec.Done = append(rec.Done, sig.ID)
		}
		if sig.Type == brain.SignalUserMessage {
			asked = true
			rec.Turns = append(rec.Turns, brain.Turn{Role: "user", Text: sig.Text, At: sig.At})
		}
	}
	if thinkErr != nil {
		row.failed++
		if !asked {
			// Nobody waits for an answer: the signals are consumed, nothing is said.
			_, err := s.journal.Commit(ctx, rec)
			return err
		}
		out = brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: s.apology, Kind: brain.KindSystem, Plain: true}}}
	}
	for _, in := range out.Intents {
		m, ok := in.(brain.SendMessage)
		if !ok {
			if brain.HomeOf(in)&brain.InTurn == 0 {
				return fmt.Errorf("%w: %s", errIntent, in.IntentName())
			}
			rec.Intents = append(rec.Intents, in) // facts, schedules, plugin changes
			continue
		}
		if m.Chat == 0 {
			m.Chat = w.Chat
		}
		if strings.TrimSpace(m.Text) == "" {
			continue
		}
		rec.Outbox = append(rec.Outbox, m)
		if m.Kind != brain.KindSystem {
			rec.Turns = append(rec.Turns, brain.Turn{Role: "assistant", Text: m.Text, At: now, Kind: m.Kind})
		}
	}
	if proactive {
		rel := w.Rel
		rec.Rel = &rel
	}
	entries, err := s.journal.Commit(ctx, rec)
	if err != nil {
		return err
	}
	sent, blocked, err := s.deliver(ctx, entries)
	if err != nil {
		return err
	}
	if len(rec.Turns) > 0 {
		if err := s.journal.Maintain(ctx, w.Chat); err != nil {
			return fmt.Errorf("sim memory upkeep: %w", err)
		}
	}

	// The loop's finish: the relationship learns what was sent and what came of it.
	rel := s.st.Rel(w.Chat)
	if rel == nil {
		return nil
	}
	for _, k := range sent {
		rel.MarkSent(now, k)
		row.msgs[kindColumn(k)]++
		if checkin {
			row.checkin++
		}
	}
	if len(sent) > 0 && (proactive || checkin) {
		s.tl.sends = append(s.tl.sends, first)
	}
	if len(sent) > 0 && now.After(s.st.LastActivity) {
		s.st.LastActivity = now
	}
	if out.Status.Valid() {
		rel.Status = out.Status
	}
	if blocked {
		rel.Dormant = true
		row.refused++
	}
	if proactive && len(rec.Outbox) == 0 {
		// A proactive run that chose silence backs off like an unanswered message.
		rel.UnansweredProactive++
		row.silent++
	}
	return nil
}

// deliver sends the committed outbox entries to the scripted user in order, as the
// loop's delivery does: once the user has blocked the bot the rest are dropped; every
// entry leaves the outbox.
func (s *scenarioSim) deliver(ctx context.Context, entries []brain.Outgoing) (sent []brain.MessageKind, blocked bool, err error) {
	for _, e := range entries {
		if !blocked {
			switch err := s.user.Send(ctx, e.Msg); {
			case err == nil:
				sent = append(sent, e.Msg.Kind)
			case errors.Is(err, brain.ErrBlocked):
				blocked = true
			default:
				return sent, blocked, fmt.Errorf("sim deliver: %w", err)
			}
		}
		if err := s.journal.MarkSent(e.ID); err != nil {
			return sent, blocked, err
		}
	}
	return sent, blocked, nil
}
