package loop_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

func TestLoopSuppressesRepeatedProactiveMessages(t *testing.T) {
	t.Parallel()
	turn := func(role, text string) brain.Turn {
		return brain.Turn{Role: role, Text: text, At: t0.Add(-8 * time.Hour)}
	}
	filler := func(n int) []brain.Turn {
		var ts []brain.Turn
		for i := range n {
			ts = append(ts, turn("user", fmt.Sprintf("user line %d", i)),
				turn("assistant", fmt.Sprintf("unrelated answer number %d here", i)))
		}
		return ts
	}
	const said = "how did the interview go yesterday"
	tests := []struct {
		name    string
		history []brain.Turn
		text    string
		kind    brain.MessageKind
		sent    bool
	}{
		{"first proactive message", nil, said, brain.KindProactive, true},
		{"exact repeat", []brain.Turn{turn("assistant", said)}, said, brain.KindProactive, false},
		{"repeat in other words order is new", []brain.Turn{turn("assistant", said)}, "yesterday the interview, how did it go", brain.KindProactive, true},
		{"jaccard exactly 0.5", []brain.Turn{turn("assistant", "a b c d e")}, "a b c d x", brain.KindProactive, false},
		{"jaccard one third", []brain.Turn{turn("assistant", "a b c d")}, "a b c e", brain.KindProactive, true},
		{"follow-ups are checked too", []brain.Turn{turn("assistant", said)}, said + "?", brain.KindFollowup, false},
		{"only the user said it", []brain.Turn{turn("user", said)}, said, brain.KindProactive, true},
		{"oldest of the last 20 assistant turns", append([]brain.Turn{turn("assistant", said)}, filler(19)...), said, brain.KindProactive, false},
		{"21st assistant turn back is forgotten", append([]brain.Turn{turn("assistant", said)}, filler(20)...), said, brain.KindProactive, true},
	}
	h := newHarness(t, proactiveAnyTime())
	byChat := map[int64]int{}
	for i, tc := range tests {
		chat := int64(i + 1)
		byChat[chat] = i
		h.st.Upsert(quietRel(chat, 7*time.Hour))
		h.journal.turns[chat] = tc.history
	}
	h.cfg.MaxConcurrent = len(tests)
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		tc := tests[byChat[w.Chat]]
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Text: tc.text, Kind: tc.kind}}}, nil
	}
	h.start()
	h.submit(nudge())
	for range tests {
		// Every proactive run commits (at least the relationship), sent or not.
		if rec := recv(t, h.journal.commits, "a proactive run's record"); rec.Rel == nil {
			t.Errorf("record of chat %d without the relationship", rec.Chat)
		}
	}
	h.stop()
	for chat, i := range byChat {
		tc := tests[i]
		t.Run(tc.name, func(t *testing.T) {
			got := h.sender.SentTo(chat)
			if tc.sent && !slices.Equal(got, []string{tc.text}) {
				t.Errorf("sent %q, want %q", got, tc.text)
			}
			if !tc.sent && len(got) != 0 {
				t.Errorf("sent %q, want it suppressed as a repeat", got)
			}
			// Sent or suppressed, the proactive run backs off once (a run that ends
			// with nothing said counts like an unanswered message).
			rel := h.st.Rel(chat)
			if want := 1; rel.UnansweredProactive != want {
				t.Errorf("UnansweredProactive = %d, want %d", rel.UnansweredProactive, want)
			}
		})
	}
	for _, w := range h.think.Wakes() {
		if w.Reason.Code != brain.ReasonProactive || w.Profile != brain.ProfileProactive {
			t.Errorf("wake of chat %d: reason %q profile %q", w.Chat, w.Reason.Code, w.Profile)
		}
	}
}
