package cognition_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

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
			"concern c1 (active, event): driving test on Friday — check-in planned 2025-03-14T18:00:00Z",
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
