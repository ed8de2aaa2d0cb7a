package sim

import (
	"context"
	"errors"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/brain"
)

// The simulation watches the core loop through its seams, in simulated time: the
// thinker sees each cognition run start (and scripts the model for it), the sender each
// message delivered to the scripted user, the journal each turn committed. The loop
// does the rest as it does for `anima run`: the turn, its commit, delivery, and what the
// relationship learns from them. Drive runs one chat's jobs one after another, so these
// are never called at once.

// simRun is one cognition run of a step, as the figures need it.
type simRun struct {
	code   string  // the wake's reason code
	first  simSend // what the figures record if a message goes out on a proactive run
	opener opener  // what the summary lists if it does (openers.go)
	sent   int     // messages delivered
}

// proactive says the run is anima's own initiative: proactive, a thought, follow-up or check-in.
func (r *simRun) proactive() bool {
	return r.code == brain.ReasonProactive || r.code == brain.ReasonFollowup || r.code == brain.ReasonConcernCheckin ||
		r.code == brain.ReasonThought // a thought of its own: a share the dream kept
}

// thinker is cognition as the loop's Thinker: it records the wake in the step's row,
// scripts the model's answer for it, and counts a failed run.
type thinker struct{ s *scenarioSim }

func (t thinker) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
	s, now := t.s, t.s.clock.Now()
	s.row.wakes = append(s.row.wakes, w.Reason.Code)
	run := &simRun{code: w.Reason.Code}
	if run.proactive() {
		s.tl.proactiveWake(now, w.Reason)
		run.first = simSend{at: now, code: w.Reason.Code,
			trigger: trigger(s.tl.pol, w, now, s.tl.prevWake, s.tl.loc),
			ready:   w.Rel.Rhythm.Ready(), live: w.Rel.Rhythm.Active(now, s.tl.loc)}
		s.tl.prevWake = now
		for _, sig := range w.Signals {
			if w.Reason.Code == brain.ReasonConcernCheckin && sig.Ref != "" {
				run.first.ref = sig.Ref
				s.tl.checkinWoken[sig.Ref] = true
				if due, ok := s.tl.due[sig.Ref]; !ok || sig.At.Before(due) {
					s.tl.due[sig.Ref] = sig.At
				}
			}
		}
	}
	s.runs = append(s.runs, run)
	roll := silenceRoll(s.rng, w.Reason.Code)
	if s.model != nil {
		s.model.prepare(w, now, s.user.day(now), roll)
	}
	s.rec.takeBrief() // an earlier run's
	out, err := s.think.Think(ctx, w)
	if err != nil {
		s.row.failed++
	}
	if run.proactive() {
		run.opener = opener{at: now, code: w.Reason.Code, brief: s.rec.takeBrief()}
	}
	return out, err
}

// sender is the scripted user as the loop's Sender: it counts each message delivered
// in the step's row by kind (and the check-ins among them), and each refused because the
// user blocked the bot.
type sender struct{ s *scenarioSim }

func (d sender) Send(ctx context.Context, m brain.SendMessage) error {
	s := d.s
	err := s.user.Send(ctx, m)
	switch {
	case err == nil:
		s.row.msgs[kindColumn(m.Kind)]++
		s.tl.noteOpener(s.clock.Now(), m)
		if n := len(s.runs); n > 0 {
			run := s.runs[n-1]
			run.sent++
			if run.proactive() {
				run.opener.texts = append(run.opener.texts, m.Text)
			}
			if run.code == brain.ReasonConcernCheckin {
				s.row.checkin++
			}
		}
	case errors.Is(err, brain.ErrBlocked):
		s.row.refused++
	}
	return err
}

// journal is the store's journal as the loop's: it counts the proactive runs that chose
// silence (committed with their relationship and no message).
type journal struct {
	bot.TurnJournal
	s *scenarioSim
}

func (j journal) Commit(ctx context.Context, rec brain.TurnRecord) ([]brain.Outgoing, error) {
	if rec.Rel != nil && len(rec.Outbox) == 0 {
		j.s.row.silent++
	}
	return j.TurnJournal.Commit(ctx, rec)
}

// sent records, for the figures, the step's proactive runs that delivered a message.
func (s *scenarioSim) sent() {
	for _, run := range s.runs {
		if run.sent > 0 && run.proactive() {
			s.tl.sends = append(s.tl.sends, run.first)
			s.tl.openers = append(s.tl.openers, run.opener)
		}
	}
}
