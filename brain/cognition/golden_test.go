package cognition_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// update rewrites the golden files: go test ./brain/cognition -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name byte for byte (or writes it with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to write it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (%d bytes, want %d); first difference at byte %d:\ngot:  %q\nwant: %q",
			name, len(got), len(want), firstDiff(got, want), around(got, firstDiff(got, want)), around(want, firstDiff(got, want)))
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func around(b []byte, i int) string { return string(b[max(0, i-80):min(len(b), i+80)]) }

// richWake is a user's wake carrying most of what a prompt can hold: two messages (the
// first waiting for a while), a photo and a text file perceived for the run, reactions, a
// late scheduled item.
func richWake() brain.Wake {
	w := userWake("so, about tonight: "+strings.Repeat("I keep thinking about the plan. ", 12), "and look at this!")
	w.Signals[0].At = t0.Add(-25 * time.Minute)
	w.Signals[1].Media = &brain.Media{Kind: brain.MediaPhoto, FileID: "p1", Mime: "image/png", Content: []byte("\x89PNG-photo")}
	w.Signals = append(w.Signals,
		brain.Signal{Type: brain.SignalUserMessage, Chat: 42, User: 7, Text: "[file list.txt]", At: t0, MessageID: 103,
			Media: &brain.Media{Kind: brain.MediaDocument, FileID: "d1", Name: "list.txt",
				Content: []byte("milk\neggs <b>bread</b>\n" + strings.Repeat("more lines of the list\n", 40))}},
		brain.Signal{Type: brain.SignalReaction, Chat: 42, User: 7, Text: "❤", Detail: "See you at eight", MessageID: 3,
			At: t0.Add(-10 * time.Hour)},
		brain.Signal{Type: brain.SignalReaction, Chat: 42, User: 7, Text: "😂", MessageID: 4, At: t0.Add(-time.Hour)},
		brain.Signal{Type: brain.SignalScheduleDue, Source: "scheduler", Chat: 42, Ref: "s1", At: t0,
			Text: "ask about the dentist", Detail: "Sam had a dentist appointment", Due: t0.Add(-2 * time.Hour)},
	)
	w.Rel.UnansweredProactive = 1
	w.Rel.Self = &brain.Self{Note: selfNote}
	return w
}

// selfNote is anima's own note about the golden relationship, from its dreams.
const selfNote = "Sam calls me \"the owl\" since I answered at 3 am; I pretend to mind.\n" +
	"I have come round to thinking winter birds are braver than summer ones. <b>not a tag</b>"

// goldenShares are thoughts kept to share: one live, one expired (never shown).
func goldenShares() []brain.Share {
	return []brain.Share{
		{ID: "sh0", Text: "an old thought", At: t0.Add(-72 * time.Hour), Expires: t0.Add(-time.Hour)},
		{ID: "sh1", Text: "a heron waits an hour for one fish: patience as a skill, not a virtue", TiedTo: "Sam's driving lessons",
			At: t0.Add(-8 * time.Hour), Expires: t0.Add(48 * time.Hour)},
	}
}

// eveningRhythm is the learned rhythm of someone who writes on weekday evenings, in loc.
func eveningRhythm(loc *time.Location) brain.Rhythm {
	var r brain.Rhythm
	for d := range 21 {
		day := time.Date(2025, 2, 20+d, 0, 0, 0, 0, loc)
		for _, h := range []int{19, 20, 21} {
			r.Observe(day.Add(time.Duration(h)*time.Hour+10*time.Minute), loc)
		}
	}
	return r
}

// richRecall is a memory with facts (not newest first), a long summary, memories of mixed
// relevance, plugin sections and 40 turns of history.
func richRecall() brain.Recall {
	rc := recall(40)
	rc.Facts = append(rc.Facts,
		brain.Fact{Attribute: "city", Value: "Berlin <b>", At: t0.Add(-72 * time.Hour)},
		brain.Fact{Attribute: "job", Value: "starts in April", At: t0.Add(time.Hour)},
	)
	rc.Memories = append(rc.Memories,
		brain.Hit{Source: "turn", Text: "Sam likes long walks", At: t0.Add(-96 * time.Hour), Score: 0.7},
		brain.Hit{Source: "turn", Text: "Sam's sister is called Ada", Score: 0.2},
	)
	rc.Sections = []brain.Section{
		{Source: "innerlife", Title: "Your private   journal\n(latest first)", Lines: []string{
			"journal, yesterday: a quiet day", "journal, 2 days ago: talked about <the job>"}},
		{Source: "concerns", Lines: []string{"concern c3 (active, event): driving test on Friday — check-in planned Fri 18:00"}},
	}
	rc.HowTheyAre = []brain.StateNote{{User: 7, Lines: []brain.StateLine{
		{Text: "down with a cold", At: t0.Add(-20 * 24 * time.Hour)}, // faded: not shown
		{Text: "exhausted, big <deadline> Friday", At: t0.Add(-30 * time.Hour)},
		{Text: "slept badly, nervous about the driving test", At: t0.Add(-3 * time.Hour)},
	}}}
	return rc
}

// openerLedger is the ledger of a chat where anima wrote first four times in a week: a
// check-in answered within the hour, missing you answered the next day, then twice no
// answer.
func openerLedger() []brain.Opener {
	return []brain.Opener{
		{Kind: brain.OpenerCheckin, Topic: "her driving lesson", Subject: "checkin:c1", At: t0.Add(-6*24*time.Hour - 2*time.Hour),
			Answered: t0.Add(-6*24*time.Hour - 90*time.Minute)},
		{Kind: brain.OpenerMissingYou, Topic: "the new job", At: t0.Add(-4*24*time.Hour + 3*time.Hour),
			Answered: t0.Add(-3*24*time.Hour + 2*time.Hour)},
		{Kind: brain.OpenerThought, Topic: "where words come from", Subject: "interest:where words come from",
			At: t0.Add(-2*24*time.Hour - 3*time.Hour)},
		{Kind: brain.OpenerFollowup, Topic: "the flat viewing", At: t0.Add(-20 * time.Hour)},
	}
}

// openerRecall is richRecall with the last two of anima's lines written first (a thought,
// then a follow-up), as a chat where anima wrote first has them.
func openerRecall() brain.Recall {
	rc := richRecall()
	marked := 0
	for i := len(rc.Turns) - 1; i >= 0 && marked < 2; i-- {
		if rc.Turns[i].Role == "assistant" {
			rc.Turns[i].Kind = []brain.MessageKind{brain.KindFollowup, brain.KindProactive}[marked]
			marked++
		}
	}
	return rc
}

// TestPromptGolden pins whole prompts byte for byte: BuildMessages on rich wakes of every
// profile, under budgets from roomy to one that cuts the last turns.
func TestPromptGolden(t *testing.T) {
	concern := &memoTool{name: "innerlife_concern", effects: true,
		profiles: []brain.Profile{brain.ProfileChat, brain.ProfileProactive, brain.ProfileDream}}
	group := func() brain.Wake {
		w := userWake("what about me?", "and Ann?")
		w.Chat, w.User = -100, 2
		w.Rel = brain.Relationship{Chat: -100, User: 1, Group: true, Status: brain.StatusAwaitingAnswer,
			LastUserMsg: t0.Add(-3 * time.Hour)}
		for i := range w.Signals {
			w.Signals[i].Chat, w.Signals[i].User, w.Signals[i].UserName = -100, 2, "Ben"
		}
		return w
	}
	groupRecall := func() brain.Recall {
		rc := richRecall()
		for i := range rc.Turns {
			if rc.Turns[i].Role == "user" {
				rc.Turns[i].Name = []string{"Ann", "", "Ben"}[i%3]
			}
		}
		rc.HowTheyAre = []brain.StateNote{
			{User: 2, Lines: []brain.StateLine{{Text: "back from a trip, jet-lagged", At: t0.Add(-5 * time.Hour)}}},
			{User: 1, Name: "Ann", Lines: []brain.StateLine{{Text: "busy moving house this week", At: t0.Add(-50 * time.Hour)}}},
		}
		return rc
	}
	proactive := func() brain.Wake {
		w := proactiveWake()
		w.Reason = brain.Reason{Code: brain.ReasonThought, Text: "I have a pending thought about this chat"}
		w.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Source: "thought", Chat: 42,
			Text: "the <bird> book they mentioned", At: t0.Add(-time.Hour)}}
		w.Rel.Status, w.Rel.UnansweredProactive = brain.StatusAwaitingAnswer, 2
		w.Rel.Rhythm = eveningRhythm(w.Loc)
		w.Rel.Openers = openerLedger()
		return w
	}
	checkin := func() brain.Wake {
		w := proactiveWake()
		w.Reason = brain.Reason{Code: brain.ReasonConcernCheckin, Text: "a check-in I planned is due: driving test on Friday"}
		w.Gated = true
		w.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Source: "thought", Chat: 42,
			Text: "driving test on Friday", Ref: "c3", At: t0}}
		w.Rel.Rhythm = eveningRhythm(w.Loc)
		w.Rel.Openers = openerLedger()[:2]
		w.Rel.Openers[1].Answered = w.Rel.Openers[1].At.Add(3 * time.Hour)
		return w
	}
	// missing is a run that misses them, its last openers answered, the first interest
	// used two openers ago: it is given the second one.
	missing := func() brain.Wake {
		w := proactiveWake()
		w.Rel.Rhythm = eveningRhythm(w.Loc)
		w.Rel.Openers = openerLedger()[:3]
		w.Rel.Openers[2].Answered = w.Rel.Openers[2].At.Add(5 * time.Hour)
		return w
	}
	dream := func() brain.Wake {
		w := proactiveWake()
		w.Profile = brain.ProfileDream
		w.Reason = brain.Reason{Code: "dream", Text: "the day is over"}
		w.Rel.Self = &brain.Self{Note: selfNote, Shares: goldenShares()}
		return w
	}
	share := func() brain.Wake {
		w := proactiveWake()
		w.Reason = brain.Reason{Code: brain.ReasonThought, Text: "something on my mind is due"}
		w.Gated = true
		w.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Source: "thought_pressure", Chat: 42,
			Text: goldenShares()[1].Text, Ref: "sh1", Detail: brain.ReasonThought, At: t0}}
		w.Rel.Self = &brain.Self{Note: selfNote, Shares: goldenShares()}
		w.Rel.Rhythm = eveningRhythm(w.Loc)
		return w
	}
	long := func() brain.Wake { return userWake(strings.Repeat("a very long message ", 400) + "THE END") }
	cases := []struct {
		name   string
		budget int
		w      func() brain.Wake
		rc     func() brain.Recall
	}{
		{"rich-roomy", 12000, richWake, richRecall},
		{"rich-6000", 6000, richWake, richRecall},
		{"rich-3700", 3700, richWake, richRecall}, // older turns dropped
		{"rich-3600", 3600, richWake, richRecall}, // and the weakest memories
		{"rich-3400", 3400, richWake, richRecall}, // and the summary's start
		{"rich-3000", 3000, richWake, richRecall}, // and the oldest of the last turns
		{"rich-2200", 2200, richWake, richRecall},
		{"rich-1200", 1200, richWake, richRecall},
		{"rich-600", 600, richWake, richRecall},
		{"group-3000", 3000, group, groupRecall},
		{"proactive-2500", 2500, proactive, openerRecall},
		{"checkin-2500", 2500, checkin, openerRecall},
		{"missing-2500", 2500, missing, openerRecall},
		{"dream-4000", 4000, dream, richRecall},
		{"share-2500", 2500, share, richRecall},
		{"long-message-1500", 1500, long, func() brain.Recall { return recall(6) }},
		{"empty-recall", 6000, func() brain.Wake { return userWake("hi") }, func() brain.Recall { return brain.Recall{} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, setup{tools: []brain.Tool{concern}, cfg: func(c *cognition.Config) {
				c.ContextTokens = tc.budget
				c.PersonaInterests = []string{"where words come from", "birds in winter"}
				c.QuietHours = brain.DefaultProactivePolicy().QuietHours
			}})
			msgs := e.c.BuildMessages(tc.w(), tc.rc(), t0)
			got, err := json.MarshalIndent(msgs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d messages, ≈ %d tokens", len(msgs), cognition.EstimateTokens(msgs))
			golden(t, "prompt-"+tc.name+".json", append(got, '\n'))
		})
	}
}

// TestRequestGolden pins the wire bytes of a run's requests: a tool-calling step, the step
// after it, an escalation to the smart model and the forced final answer of a spent step
// budget.
func TestRequestGolden(t *testing.T) {
	memo := &memoTool{name: "test_memo", effects: true}
	e := newEnv(t, setup{tools: []brain.Tool{memo}, mem: &fakeMemory{rc: recall(6)}, cfg: func(c *cognition.Config) {
		c.MaxIterations = 3
		c.ContextTokens = 3000
	}})
	e.srv.Enqueue(
		openaitest.Tool("test_memo", `{"note":"exam on Monday","tag":null}`),
		openaitest.Tool(cognition.ToolEscalate, `{"reason":"careful"}`),
		openaitest.Tool("test_memo", `{"note":"again","tag":"x"}`).ForModel(smart),
		openaitest.Answer("Good luck on Monday!", "awaiting_answer", 0.9).ForModel(smart),
	)
	out := think(t, e, userWake("my exam is on Monday"))
	if s := sends(out); len(s) != 1 || s[0].Text != "Good luck on Monday!" {
		t.Errorf("sends = %+v", s)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	var b bytes.Buffer
	for i, r := range reqs {
		fmt.Fprintf(&b, "--- request %d\n", i)
		if err := json.Indent(&b, r.Raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
	}
	golden(t, "requests-tool-escalate-forced.txt", b.Bytes())
	if last := reqs[3].Body; len(last.Tools) != 0 || last.Messages[len(last.Messages)-1].Role != openai.ChatMessageRoleSystem {
		t.Errorf("the last request is not a forced answer")
	}
}
