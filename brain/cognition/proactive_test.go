package cognition_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

// TestOpenerAnswerCarriesItsTopic: a run that may write first asks for the answer with a
// topic (a strict schema, the topic a required null union) and its message carries the
// opener for the ledger: its kind (from the pick: an interest makes it a thought, not
// "missing you"), the model's topic and the subject code chose; a chat
// run's schema and message are as before, without.
func TestOpenerAnswerCarriesItsTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.PersonaInterests = []string{"where words come from", "birds in winter"}
	}})
	used := proactiveWake()
	used.Rel.Openers = []brain.Opener{{Kind: brain.OpenerThought, Subject: "interest:where words come from", At: t0.Add(-time.Hour)}}
	used2 := func() brain.Wake {
		w := proactiveWake()
		w.Rel.Openers = append(slices.Clone(used.Rel.Openers),
			brain.Opener{Kind: brain.OpenerThought, Subject: "interest:birds in winter", At: t0.Add(-time.Hour)})
		return w
	}
	checkin := proactiveWake()
	checkin.Reason = brain.Reason{Code: brain.ReasonConcernCheckin, Text: "a check-in I planned is due: the exam"}
	checkin.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Chat: 42, Text: "the exam on Monday", Ref: "c7",
		Detail: brain.ReasonConcernCheckin, At: t0}}
	for _, tc := range []struct {
		name      string
		w         brain.Wake
		reply     openaitest.Reply
		want      brain.Opener
		topicProp bool
	}{
		{"missing you, the first interest", proactiveWake(),
			openaitest.OpenerAnswer("Did you know 'salary' comes from salt?", "awaiting_answer", 0.9, "the word salary"),
			brain.Opener{Kind: brain.OpenerThought, Topic: "the word salary", Subject: "interest:where words come from"}, true},
		{"not the interest of the last opener; the label when the model gives none", used,
			openaitest.OpenerAnswer("The robins are back.", "active", 0.9, ""),
			brain.Opener{Kind: brain.OpenerThought, Topic: "birds in winter", Subject: "interest:birds in winter"}, true},
		{"nothing to bring up: missing you", used2(),
			openaitest.OpenerAnswer("Thinking of you.", "active", 0.9, ""),
			brain.Opener{Kind: brain.OpenerMissingYou}, true},
		{"a check-in", checkin,
			openaitest.OpenerAnswer("How did the exam go?", "awaiting_answer", 0.9, "the exam"),
			brain.Opener{Kind: brain.OpenerCheckin, Topic: "the exam", Subject: "checkin:c7"}, true},
		{"a chat answer is no opener", userWake("hi"),
			openaitest.Answer("Hi Sam", "active", 0.9), brain.Opener{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.srv.Requests())
			e.srv.Enqueue(tc.reply)
			s := sends(think(t, e, tc.w))
			if len(s) != 1 {
				t.Fatalf("sends = %+v, want one", s)
			}
			if s[0].Opener != tc.want {
				t.Errorf("opener = %+v, want %+v", s[0].Opener, tc.want)
			}
			reqs := e.srv.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			raw, _ := json.Marshal(reqs[0].Body.ResponseFormat.JSONSchema.Schema)
			var schema struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(raw, &schema); err != nil {
				t.Fatal(err)
			}
			_, hasTopic := schema.Properties["topic"]
			if hasTopic != tc.topicProp || strings.Contains(strings.Join(schema.Required, ","), "topic") != tc.topicProp {
				t.Errorf("schema %s: topic property and required = %v, want %v", raw, hasTopic, tc.topicProp)
			}
			if tc.topicProp && !strings.Contains(string(schema.Properties["topic"]), `"type":["string","null"]`) {
				t.Errorf("topic schema %s, want a string or null", schema.Properties["topic"])
			}
		})
	}
}

// realMemory is a memory.Memory on a bbolt file in t.TempDir(), holding chat 42's history:
// turns, oldest first, one minute apart, ending an hour before t0.
func realMemory(t *testing.T, turns []brain.Turn) *memory.Memory {
	t.Helper()
	st, err := storage.Open(t.TempDir()+"/anima.db", storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m, err := memory.New(st, nil, memory.Options{RecentTurns: 6})
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		turns[i].At = t0.Add(-time.Hour - time.Duration(len(turns)-i)*time.Minute)
		turns[i].User = 7
	}
	if _, err := st.CommitTurn(storage.Commit{Chat: 42, Turns: turns,
		Also: func(tx *storage.Tx) error { return m.IndexTx(tx, 42, turns) }}, turns[0].At); err != nil {
		t.Fatal(err)
	}
	return m
}

func chatTurns(texts ...string) []brain.Turn {
	out := make([]brain.Turn, len(texts))
	for i, tx := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out[i] = brain.Turn{Role: role, Text: tx}
	}
	return out
}

func smallTalk(n int) []string {
	topics := []string{"weather", "coffee", "lunch", "music", "dinner", "football"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("small talk %d about %s", i, topics[i%len(topics)])
	}
	return out
}

// TestProactiveRecallSearchesTopics: a proactive wake searches memory on the concerns in
// the sections, the open thread and the user's last turns — not on its reason text — so
// the relevant memories reach the prompt.
func TestProactiveRecallSearchesTopics(t *testing.T) {
	t.Parallel()
	history := append([]string{
		"My driving test is on Friday morning and I'm so nervous about parallel parking",
		"You'll do fine! Practise the parking once more on Thursday.",
		"My cello teacher Marta says my bowing got much better",
		"That's lovely to hear.",
	}, smallTalk(10)...)
	history = append(history, "cello practice was rough today, my fingers hurt", "Do you want to tell me about it?")

	tests := []struct {
		name     string
		wake     func() brain.Wake
		sections []brain.Section
		want     []string // in the memories block
	}{
		{"a concern in the sections", func() brain.Wake {
			w := proactiveWake()
			w.Reason.Text = "17h29m since we last talked; pressure 0.87"
			return w
		}, []brain.Section{{Source: "innerlife", Title: "Your inner life", Lines: []string{
			"journal, Thu 13 Mar 21:00, digest: a quiet day",
			"concern: driving test — mentioned on Wednesday, for today; you mean to ask how it went this evening",
		}}}, []string{"parallel parking"}},
		{"the user's last turns", func() brain.Wake {
			w := proactiveWake()
			w.Reason.Text = "6h since we last talked; pressure 0.50"
			w.Rel.Status = brain.StatusAwaitingAnswer
			return w
		}, nil, []string{"Marta"}},
		{"a check-in's thought", func() brain.Wake {
			w := proactiveWake()
			w.Reason = brain.Reason{Code: brain.ReasonConcernCheckin, Text: "a check-in I planned is due"}
			w.Signals = []brain.Signal{{Type: brain.SignalThoughtPressure, Source: "thought", Chat: 42,
				Text: "how the driving test went", At: t0}}
			return w
		}, nil, []string{"parallel parking"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			secs := tc.sections
			e := newEnv(t, setup{mem: realMemory(t, chatTurns(history...)),
				opts: func(o *cognition.Options) {
					o.Sections = func(brain.Wake, time.Time) []brain.Section { return secs }
				}})
			e.srv.Enqueue(openaitest.Answer("", "idle", 0.9))
			think(t, e, tc.wake())
			var mems string
			for _, m := range e.srv.Requests()[0].Body.Messages {
				if strings.Contains(m.Content, "Possibly relevant memories:") {
					_, mems, _ = strings.Cut(m.Content, "Possibly relevant memories:")
				}
			}
			for _, want := range tc.want {
				if !strings.Contains(mems, want) {
					t.Errorf("relevant memories lack %q:\n%s", want, mems)
				}
			}
		})
	}
}

// TestShareConsumed: a run a thought to share woke names that thought in its ask, and the
// thought is consumed (brain.ShareUsed) only when a message goes out; a run woken by
// silence, with nothing of the person's to bring up, is given the share too (issue 35: a
// share before an interest, "missing you" only when nothing is there).
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
		{"woken by silence, sent", silence, "Herons!", true, true},
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

// TestTheirLifeFirst (issue 35): what a first message brings up is ranked by what matters
// to the person now — an event of theirs today, then a how-they-are line under two days
// old (a share that matters most, tied to what is on their plate, just before it), a
// question of theirs left open, a share, an interest last — and the message's kind follows the pick: a check-in for their life, a
// thought for a share or an interest, "missing you" only with nothing to bring up.
func TestTheirLifeFirst(t *testing.T) {
	t.Parallel()
	event := brain.Section{Source: "innerlife", Topics: []brain.Topic{{ID: "event:c1", Label: "driving test",
		Kind: brain.TopicEvent, On: "2025-03-14", When: "today", Weight: 3}}}
	how := []brain.StateNote{{User: 7, Lines: []brain.StateLine{
		{Text: "down with a cold", At: t0.Add(-3 * 24 * time.Hour)}, // too old to bring up
		{Text: "slept badly, nervous about the test", At: t0.Add(-3 * time.Hour)}}}}
	question := []brain.Turn{{Role: "assistant", Text: "Good night!", At: t0.Add(-20 * time.Hour)},
		{Role: "user", Text: "do herons sleep standing up?", At: t0.Add(-19 * time.Hour)}}
	shares := &brain.Self{Shares: []brain.Share{
		{ID: "s1", Text: "a passing thought", At: t0.Add(-5 * time.Hour), Expires: t0.Add(48 * time.Hour), Matters: 1},
		{ID: "s2", Text: "patience as a skill", At: t0.Add(-5 * time.Hour), Expires: t0.Add(48 * time.Hour), Matters: 3}}}
	passing := &brain.Self{Shares: []brain.Share{shares.Shares[0]}} // a passing thought: after their life
	full := brain.Recall{Sections: []brain.Section{event}, HowTheyAre: how, Turns: question}
	for _, tc := range []struct {
		name   string
		rc     brain.Recall
		self   *brain.Self
		ask    string
		opener brain.Opener
	}{
		{"an event today", full, shares, `Today is the day of "driving test" for them`,
			brain.Opener{Kind: brain.OpenerCheckin, Topic: "driving test", Subject: "event:c1"}},
		{"a share that matters most, after their events", brain.Recall{Sections: []brain.Section{event}, HowTheyAre: how}, shares,
			`Today is the day of "driving test"`, brain.Opener{Kind: brain.OpenerCheckin, Topic: "driving test", Subject: "event:c1"}},
		{"a share that matters most, before how they are", brain.Recall{HowTheyAre: how}, shares,
			`share something with them: "patience as a skill"`,
			brain.Opener{Kind: brain.OpenerThought, Topic: "patience as a skill", Subject: "share:s2"}},
		{"how they are", brain.Recall{HowTheyAre: how, Turns: question}, passing,
			`They told you how they are: "slept badly, nervous about the test" (earlier today)`,
			brain.Opener{Kind: brain.OpenerCheckin, Topic: "slept badly, nervous about the test", Subject: "howtheyare:slept badly, nervous about the test"}},
		{"a question of theirs", brain.Recall{Turns: question}, passing, `They asked "do herons sleep standing up?"`,
			brain.Opener{Kind: brain.OpenerCheckin, Topic: "do herons sleep standing up?", Subject: "question:do herons sleep standing up?"}},
		{"a passing share", brain.Recall{}, passing, `share something with them: "a passing thought"`,
			brain.Opener{Kind: brain.OpenerThought, Topic: "a passing thought", Subject: "share:s1"}},
		{"an interest last", brain.Recall{}, nil, `bring up "birds in winter" (one of your interests)`,
			brain.Opener{Kind: brain.OpenerThought, Topic: "birds in winter", Subject: "interest:birds in winter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			secs := tc.rc.Sections
			e := newEnv(t, setup{mem: &fakeMemory{rc: tc.rc}, cfg: func(c *cognition.Config) {
				c.PersonaInterests = []string{"birds in winter"}
			}, opts: func(o *cognition.Options) {
				o.Sections = func(brain.Wake, time.Time) []brain.Section { return secs }
			}})
			w := proactiveWake()
			w.Rel.Self = tc.self
			e.srv.Enqueue(openaitest.OpenerAnswer("Hi!", "active", 0.9, ""))
			s := sends(think(t, e, w))
			msgs := e.srv.Requests()[0].Body.Messages
			ask := msgs[len(msgs)-1].Content
			braintest.CheckText(t, "the ask", ask, []string{tc.ask},
				[]string{"pick up something from your memories", "It has been quiet between you", "stay silent"})
			if len(s) != 1 || s[0].Opener != tc.opener {
				t.Errorf("sent %+v, want one with opener %+v", s, tc.opener)
			}
		})
	}
}

// TestShareInAReply (issue 35): someone who always writes first never gets a first
// message to carry what the dream kept for them; a friend tells it when they come. A
// private chat run, the person back after a while, is offered the share that matters
// most (its own section, the topic asked for in the answer's schema); the share is used up
// and the message marked only when the answer's topic says the reply brought it up. A
// group's run is offered none.
func TestShareInAReply(t *testing.T) {
	t.Parallel()
	shares := []brain.Share{
		{ID: "sh1", Text: "herons are patient", At: t0.Add(-6 * time.Hour), Expires: t0.Add(48 * time.Hour), Matters: 1},
		{ID: "sh2", Text: "a trick for driving-test nerves", TiedTo: "the driving test", At: t0.Add(-5 * time.Hour),
			Expires: t0.Add(48 * time.Hour), Matters: 3},
	}
	back := func() brain.Wake {
		w := userWake("morning! slept badly again")
		w.Rel.Self = &brain.Self{Shares: shares}
		return w
	}
	group := back()
	group.Rel.Group, group.Chat = true, -100
	for _, tc := range []struct {
		name    string
		w       brain.Wake
		reply   openaitest.Reply
		offered bool
		used    bool
	}{
		{"back, brought up", back(), openaitest.OpenerAnswer("Morning, Sam. Oh, and a trick for the nerves…", "active", 0.9, "test nerves trick"), true, true},
		{"back, kept for later", back(), openaitest.OpenerAnswer("Morning, Sam. Poor sleep again?", "awaiting_answer", 0.9, ""), true, false},
		{"a group", group, openaitest.Answer("Morning all.", "active", 0.9), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, setup{})
			e.srv.Enqueue(tc.reply)
			out := think(t, e, tc.w)
			req := e.srv.Requests()[0].Body
			var system string
			for _, m := range req.Messages {
				if m.Role == openai.ChatMessageRoleSystem {
					system += m.Content + "\n"
				}
			}
			offered := strings.Contains(system, `You kept something to share with them: "a trick for driving-test nerves" (tied to "the driving test")`)
			if offered != tc.offered || strings.Contains(system, "herons") {
				t.Errorf("share offered %v, want %v (only the one that matters most):\n%s", offered, tc.offered, system)
			}
			schema := req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil &&
				strings.Contains(string(req.ResponseFormat.JSONSchema.Schema.(json.RawMessage)), `"topic"`)
			if schema != tc.offered {
				t.Errorf("answer schema asks for the topic: %v, want %v", schema, tc.offered)
			}
			var used []string
			for _, in := range out.Intents {
				if u, ok := in.(brain.ShareUsed); ok {
					used = append(used, u.ID)
				}
			}
			s := sends(out)
			if len(s) != 1 {
				t.Fatalf("sends %+v, want one reply", s)
			}
			if tc.used != (len(used) == 1 && used[0] == "sh2") || !tc.used && len(used) > 0 {
				t.Errorf("shares used %v, want sh2 used: %v", used, tc.used)
			}
			if want := map[bool]string{true: "a trick for driving-test nerves"}[tc.used]; s[0].Shared != want || s[0].Opener.Kind != "" {
				t.Errorf("reply marked shared %q (opener %+v), want %q and no opener", s[0].Shared, s[0].Opener, want)
			}
		})
	}
}
