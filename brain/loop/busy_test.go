package loop_test

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestNoInitiativeWhileAnswering: while a chat's run is in flight, the proactive rule's
// wake for it is left out, even when the silence says it is due (here a message taken in
// long after it was written, so the silence runs from its date until the answer goes
// out). Nothing is recorded for the left-out wake (no cooldown, no day's count), and only
// the answer is thought about and sent.
func TestNoInitiativeWhileAnswering(t *testing.T) {
	t.Parallel()
	h := newHarness(t, proactiveAnyTime())
	h.agg.decided = make(chan brain.Wake, 64)
	h.st.Upsert(quietRel(7, 7*time.Hour))
	gate := make(chan struct{})
	h.think.gateChat[7] = gate
	h.start()
	late := h.msg(1, 7, "sorry, I fell asleep")
	// Written a day ago, taken in now: at this hour of the day, so the rhythm (which
	// learns from it) does not hold the proactive wake for the hours the user was seen in.
	late.At = t0.Add(-24 * time.Hour)
	h.submit(late)
	if w := recv(t, h.think.entered, "the answer's run"); w.Reason.Code != brain.ReasonUserMessage {
		t.Fatalf("first run's reason %q, want the user's message", w.Reason.Code)
	}
	h.submit(nudge()) // a step while the answer is in flight
	for {
		if w := recv(t, h.agg.decided, "the proactive rule to fire"); w.Chat == 7 && w.Reason.Code == brain.ReasonProactive {
			break
		}
	}
	close(gate)
	if m := recv(t, h.sender.attempts, "the answer"); m.Text != "re: sorry, I fell asleep" {
		t.Errorf("sent %q, want the answer", m.Text)
	}
	h.submit(nudge())
	h.stop()
	if n := len(h.think.Wakes()); n != 1 {
		t.Errorf("%d runs, want only the answer's", n)
	}
	if n := len(h.sender.Sent()); n != 1 {
		t.Errorf("%d messages, want only the answer", n)
	}
	if rel := h.st.Rel(7); !rel.LastProactive.IsZero() || rel.ProactiveToday != 0 {
		t.Errorf("relationship %+v: a left-out wake must not count against the cooldown or the day", *rel)
	}
}
