package sim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
)

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
