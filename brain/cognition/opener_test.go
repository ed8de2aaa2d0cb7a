package cognition_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestOpenerAnswerCarriesItsTopic: a run that may write first asks for the answer with a
// topic (a strict schema, the topic a required null union) and its message carries the
// opener for the ledger: its kind, the model's topic and the subject code chose; a chat
// run's schema and message are as before, without.
func TestOpenerAnswerCarriesItsTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.PersonaInterests = []string{"where words come from", "birds in winter"}
	}})
	used := proactiveWake()
	used.Rel.Openers = []brain.Opener{{Kind: brain.OpenerThought, Subject: "interest:where words come from", At: t0.Add(-time.Hour)}}
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
			brain.Opener{Kind: brain.OpenerMissingYou, Topic: "the word salary", Subject: "interest:where words come from"}, true},
		{"not the interest of the last opener; the label when the model gives none", used,
			openaitest.OpenerAnswer("The robins are back.", "active", 0.9, ""),
			brain.Opener{Kind: brain.OpenerMissingYou, Topic: "birds in winter", Subject: "interest:birds in winter"}, true},
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
	text := func(w brain.Wake) string {
		var b strings.Builder
		for _, m := range e.c.BuildMessages(w, brain.Recall{}, t0) {
			b.WriteString(m.Content + "\n")
		}
		return b.String()
	}
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
