package prompt_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/prompt"
)

// machineText matches what must never reach the model: an aggregator figure or a
// duration in the aggregator's notation ("pressure 0.71", "10h37m").
var machineText = regexp.MustCompile(`pressure|\d+h\d+m|\d+m\d+s`)

// TestProfilePrompts: each profile's prompt speaks for what the run is for. The dream
// thinks alone (no chat, no answer contract); a proactive run carries no guidance meant for
// a new message; after unanswered openers the brief says so plainly and the ask offers no
// thought to share; no wake reason or aggregator figure reaches any prompt.
func TestProfilePrompts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{concern: true, cfg: func(c *prompt.Config) {
		c.PersonaInterests = []string{"birds in winter"}
	}})
	reason := brain.Reason{Code: brain.ReasonProactive, Text: "10h37m since we last talked; pressure 0.71"}
	dream := proactiveWake()
	dream.Profile, dream.Reason = brain.ProfileDream, reason
	missing := proactiveWake()
	missing.Reason = reason
	ignored := proactiveWake()
	ignored.Reason, ignored.Rel.UnansweredProactive = reason, 2
	checkin := proactiveWake()
	checkin.Reason = brain.Reason{Code: brain.ReasonConcernCheckin, Text: "a check-in I planned is due: the exam"}
	checkin.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Chat: 42, Text: "the exam on Monday", At: t0}}
	chat := userWake("my exam is on Monday")
	chat.Reason = brain.Reason{Code: brain.ReasonUserMessage, Text: "Sam sent 1 message"}

	for _, tc := range []struct {
		name       string
		w          brain.Wake
		want, dont []string
	}{
		{"chat", chat, []string{"You are talking with \"Sam\" in a Telegram chat", `"response"`, "open a concern with innerlife_concern"},
			[]string{"Sam sent 1 message", "No new message"}},
		{"dream", dream, []string{"you are thinking alone", "Nothing you write here reaches them", "nightly reflection",
			"no answer is needed", `Your own interests: "birds in winter"`, "matters 1 to 3"},
			[]string{"Telegram chat", `"response"`, "JSON", "empty response", "open a concern with innerlife_concern"}},
		{"proactive", missing, []string{"Nothing of theirs is waiting. If you write, bring up \"birds in winter\" (one of your interests)"},
			[]string{"open a concern with innerlife_concern", "went unanswered", "It has been quiet between you",
				"pick up something from your last conversation"}},
		{"proactive after unanswered openers", ignored, []string{
			"Your last openers went unanswered: you wrote first twice since they last wrote, with no answer.",
			"write only if this is worth it now, keep it light, or stay silent"},
			[]string{"birds in winter", "small thought of your own", "do not pester"}},
		{"check-in", checkin, []string{"You planned to check in about: \"the exam on Monday\"", "Ask how it went"},
			[]string{"birds in winter", "a check-in I planned is due", "open a concern with innerlife_concern"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := e.build(tc.w, braintest.Recall(6), t0)
			all := promptText(msgs)
			braintest.CheckText(t, "prompt", all, tc.want, append(tc.dont, reason.Text, "unspecified"))
			if s := machineText.FindString(all); s != "" {
				t.Errorf("machine text %q reached the prompt:\n%s", s, all)
			}
			if !strings.HasPrefix(msgs[0].Content, "You are Mira.") {
				t.Errorf("the prompt does not open with the persona: %q", msgs[0].Content)
			}
			if !strings.HasPrefix(msgs[1].Content, "How things stand:") {
				t.Errorf("the brief does not follow the persona: %q", msgs[1].Content)
			}
		})
	}
}

// TestBudgetCutsWholeSections: a prompt still over budget once the recall is fitted into
// what the other sections leave drops whole sections in cutOrder — the reactions, then the
// brief — never a part of one, and never the persona or the ask.
func TestBudgetCutsWholeSections(t *testing.T) {
	t.Parallel()
	w := richWake()
	w.Signals = append(w.Signals[:2:2], richWake().Signals[3]) // two messages with a photo, a reaction
	rc := richRecall()
	rc.Turns = nil
	for _, tc := range []struct {
		budget           int
		reactions, brief bool
	}{
		{6000, true, true},
		{1350, false, true},
		{1300, false, false},
	} {
		e := newEnv(t, setup{cfg: func(c *prompt.Config) { c.ContextTokens = tc.budget }})
		msgs := e.build(w, rc, t0)
		all := systemText(msgs)
		if got := strings.Contains(all, "reacted"); got != tc.reactions {
			t.Errorf("budget %d: reactions kept = %v, want %v", tc.budget, got, tc.reactions)
		}
		if got := strings.Contains(all, "How things stand:"); got != tc.brief {
			t.Errorf("budget %d: brief kept = %v, want %v", tc.budget, got, tc.brief)
		}
		if got := strings.Count(all, "<untrusted>\n"); got != strings.Count(all, "</untrusted>") {
			t.Errorf("budget %d: a fenced section was cut in part:\n%s", tc.budget, all)
		}
		if !strings.HasPrefix(msgs[0].Content, "You are Mira.") || msgs[len(msgs)-1].Role != "user" {
			t.Errorf("budget %d: the persona or the ask was cut", tc.budget)
		}
	}
}
