package cognition_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestShareConsumed: a run a thought to share woke names that thought in its ask, and the
// thought is consumed (brain.ShareUsed) only when a message goes out; a run woken by
// silence consumes none.
func TestShareConsumed(t *testing.T) {
	t.Parallel()
	share := brain.Share{ID: "sh1", Text: "herons are patient", TiedTo: "their driving lessons", At: t0, Expires: t0.Add(48 * time.Hour)}
	woken := proactiveWake()
	woken.Reason, woken.Gated = brain.Reason{Code: brain.ReasonThought}, true
	woken.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Chat: 42, Text: share.Text, Ref: "sh1",
		Detail: brain.ReasonThought, At: t0}}
	woken.Rel.Self = &brain.Self{Shares: []brain.Share{share}}
	silence := proactiveWake()
	silence.Rel.Self = &brain.Self{Shares: []brain.Share{share}}
	for _, tc := range []struct {
		name     string
		w        brain.Wake
		reply    string
		used     bool
		asksWith bool
	}{
		{"woken by it, sent", woken, "Herons, Sam: patience as a skill.", true, true},
		{"woken by it, silent", woken, "", false, true},
		{"woken by silence, sent", silence, "Hi Sam!", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, setup{})
			e.srv.Enqueue(openaitest.Answer(tc.reply, "active", 0.9))
			out := think(t, e, tc.w)
			var used []string
			for _, in := range out.Intents {
				if u, ok := in.(brain.ShareUsed); ok && u.Chat == 42 {
					used = append(used, u.ID)
				}
			}
			if got := len(used) == 1 && used[0] == "sh1"; got != tc.used || len(used) > 1 {
				t.Errorf("shares used %v, want sh1 used: %v", used, tc.used)
			}
			reqs := e.srv.Requests()
			last := reqs[len(reqs)-1].Body.Messages
			ask := last[len(last)-1].Content
			if got := strings.Contains(ask, `You have been meaning to share something with them: "herons are patient"`); got != tc.asksWith {
				t.Errorf("ask names the thought: %v, want %v:\n%s", got, tc.asksWith, ask)
			}
		})
	}
}
