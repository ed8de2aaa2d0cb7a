package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

// TestOpenersOfAScriptedRun: every first message of a scripted replay is listed once,
// in the order sent, with a brief from its own prompt (the local time it names is the
// send's) and the scripted words.
func TestOpenersOfAScriptedRun(t *testing.T) {
	t.Parallel()
	tl := runExample(t, "night-owl")
	if len(tl.openers) == 0 || len(tl.openers) != len(tl.sends) {
		t.Fatalf("%d openers for %d first messages sent, want one each and some", len(tl.openers), len(tl.sends))
	}
	for i, o := range tl.openers {
		if !o.at.Equal(tl.sends[i].at) || o.code != tl.sends[i].code {
			t.Errorf("opener %d at %s (%s), send at %s (%s): want the same run", i, o.at, o.code, tl.sends[i].at, tl.sends[i].code)
		}
		now := o.at.In(tl.loc).Format("15:04") + " for them"
		if !strings.HasPrefix(o.brief, briefHeading) || !strings.Contains(o.brief, now) {
			t.Errorf("opener %d: brief %q, want the heading and %q", i, o.brief, now)
		}
		if len(o.texts) != 1 || !strings.HasPrefix(o.texts[0], "Thinking of you") {
			t.Errorf("opener %d: texts %q, want the scripted proactive words", i, o.texts)
		}
	}
}

func TestWriteOpeners(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 3, 20, 57, 0, 0, time.UTC)
	brief := briefHeading + "\n- Now: Tuesday evening.\n- The last thing said: they wrote \"hi\x1b[2J\"."
	tests := []struct {
		name  string
		model string
		o     opener
		want  string
	}{
		{"scripted proactive", "", opener{at: at, code: brain.ReasonProactive, brief: brief, texts: []string{"How was it?"}},
			"\nfirst messages: 1, each with the brief its prompt gave the model (the scripted model's placeholder words; the briefs are anima's)\n\n" +
				"Tue 03 Mar 21:57  proactive\n" +
				"    - Now: Tuesday evening.\n" +
				"    - The last thing said: they wrote \"hi\\x1b[2J\".\n" +
				"  anima: How was it?\n"},
		{"live check-in over two messages of two lines", "m", opener{at: at, code: brain.ReasonConcernCheckin, brief: brief,
			texts: []string{"Hey!\nHow did the interview go?", "No rush."}},
			"\nfirst messages: 1, each with the brief its prompt gave the model (the configured model's words)\n\n" +
				"Tue 03 Mar 21:57  check-in\n" +
				"    - Now: Tuesday evening.\n" +
				"    - The last thing said: they wrote \"hi\\x1b[2J\".\n" +
				"  anima: Hey!\n" +
				"         How did the interview go?\n" +
				"  anima: No rush.\n"},
		{"follow-up whose brief the budget cut", "m", opener{at: at, code: brain.ReasonFollowup, texts: []string{"Still there?"}},
			"\nfirst messages: 1, each with the brief its prompt gave the model (the configured model's words)\n\n" +
				"Tue 03 Mar 21:57  follow-up\n" +
				"    (no brief: the prompt's budget cut it)\n" +
				"  anima: Still there?\n"},
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tl := &timeline{loc: berlin, model: tc.model, openers: []opener{tc.o}}
			var b bytes.Buffer
			tl.writeOpeners(&b)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestBriefOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"the brief's system message", `{"messages":[{"role":"system","content":"You are anima."},{"role":"system","content":"How things stand:\n- Now: noon."},{"role":"user","content":"How things stand: not me"}]}`,
			"How things stand:\n- Now: noon."},
		{"a user message that starts the same", `{"messages":[{"role":"user","content":"How things stand: mine"}]}`, ""},
		{"parts beside it", `{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"system","content":"How things stand:\n- a"}]}`,
			"How things stand:\n- a"},
		{"the summarizer's", `{"messages":[{"role":"system","content":"You keep the long-term memory"}]}`, ""},
		{"not JSON", `nope`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := briefOf([]byte(tc.body)); got != tc.want {
				t.Errorf("briefOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOpenerRepeats(t *testing.T) {
	at := time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC)
	op := func(subject, topic string) simOpener {
		return simOpener{at: at, o: brain.Opener{Kind: brain.OpenerMissingYou, Subject: subject, Topic: topic}}
	}
	for _, tc := range []struct {
		name string
		os   []simOpener
		want int
	}{
		{"none", nil, 0},
		{"all different", []simOpener{op("interest:a", ""), op("interest:b", ""), op("", "the exam")}, 0},
		{"same subject two apart", []simOpener{op("interest:a", "x"), op("interest:b", ""), op("interest:a", "y")}, 1},
		{"same topic, any case", []simOpener{op("", "The Exam"), op("", "the exam")}, 1},
		{"six apart is no repeat", []simOpener{op("interest:a", ""), op("", "1"), op("", "2"), op("", "3"), op("", "4"), op("", "5"), op("interest:a", "")}, 0},
		{"no topic is never a repeat", []simOpener{op("", ""), op("", "")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := openerRepeats(tc.os); got != tc.want {
				t.Errorf("openerRepeats = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestOpenerScriptReadsTheTopicFromTheAsk: the scripted model names as its topic what the
// request's ask says to bring up, and none when it says nothing.
func TestOpenerScriptReadsTheTopicFromTheAsk(t *testing.T) {
	s := &openerScript{text: "hi", status: "active"}
	for _, tc := range []struct{ ask, want string }{
		{`Decide whether… If you write, bring up "where words come from" (one of your interests) when…`, "where words come from"},
		{`No new message from "Sam". You planned to check in about: "the \"big\" exam".` + "\nAsk how it went", `the "big" exam`},
		{`It has been quiet between you, and you may write first.`, ""},
	} {
		req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: tc.ask}}}
		var got struct {
			Response string  `json:"response"`
			Topic    *string `json:"topic"`
		}
		if err := json.Unmarshal([]byte(s.reply(req).Content), &got); err != nil {
			t.Fatal(err)
		}
		topic := ""
		if got.Topic != nil {
			topic = *got.Topic
		}
		if got.Response != "hi" || topic != tc.want {
			t.Errorf("ask %q: answer %+v, topic %q; want hi, %q", tc.ask, got, topic, tc.want)
		}
	}
}
