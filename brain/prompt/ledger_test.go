package prompt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestLedgerSection: a run that may write first reads its last openers in plain words, the
// newest five; a chat run does not get them.
func TestLedgerSection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{})
	tue := time.Date(2025, 3, 11, 19, 10, 0, 0, time.UTC) // t0 is Friday 14 March, 10:30 in Berlin
	ledger := []brain.Opener{{Kind: brain.OpenerThought, Topic: "too old to show", At: tue.Add(-time.Hour)}}
	for range 3 {
		ledger = append(ledger, brain.Opener{Kind: brain.OpenerThought, Topic: "filler", At: tue.Add(-time.Hour)})
	}
	ledger = append(ledger,
		brain.Opener{Kind: brain.OpenerCheckin, Topic: "her driving test", At: tue, Answered: tue.Add(40 * time.Minute)},
		brain.Opener{Kind: brain.OpenerMissingYou, At: tue.Add(37 * time.Hour)})
	text := func(w brain.Wake) string { return promptText(e.build(w, brain.Recall{}, t0)) }
	w := proactiveWake()
	w.Rel.Openers = ledger
	got := text(w)
	for _, want := range []string{
		"Your last openers (messages you wrote first), oldest first:",
		`- on Tuesday evening: a check-in about "her driving test" — they answered within the hour.`,
		"- yesterday morning: missing you — no answer yet.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("proactive prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "too old to show") {
		t.Errorf("more than the last five openers shown:\n%s", got)
	}
	chat := userWake("hi")
	chat.Rel.Openers = ledger
	if got := text(chat); strings.Contains(got, "Your last openers") {
		t.Errorf("a chat run got the ledger:\n%s", got)
	}
}
