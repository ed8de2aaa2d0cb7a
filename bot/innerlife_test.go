package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/storage"
)

// TestInnerLifeCommands: /thoughts shows the journal and the concerns, /status the
// active concerns and when the next check-in comes in words, /status details its date,
// none with a model call; /forget leaves nothing
// of the user in the plugin's bucket.
func TestInnerLifeCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.opts.PerChatInterval = 10 * time.Millisecond // the answers, not Telegram's pacing, are checked
	h.cfg.User.Timezone = "UTC"
	_, stop := h.start()
	checkIn := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Minute)
	h.ai.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.Call{
			{Name: "innerlife_concern", Args: fmt.Sprintf(`{"action":"open","id":null,"summary":"the driving test on Friday",`+
				`"kind":"event","check_in_at":%q,"note":null}`, checkIn.Format(time.RFC3339))},
			{Name: "innerlife_journal", Args: `{"kind":"observation","text":"They sound nervous about the driving test."}`},
		}},
		openaitest.Answer("Good luck on Friday!", "active", 0.95),
	)
	h.say("My driving test is on Friday")
	calls := len(h.ai.Requests())
	steps := []struct {
		send string
		want []string
	}{
		{"/thoughts", []string{"What I've been thinking lately:", "They sound nervous about the driving test. (observation",
			"Things of yours I'm following:", "the driving test on Friday — I mean to ask how it went, " + checkIn.Format("Mon 2 Jan 15:04")}},
		{"/status", []string{"I'm following: the driving test on Friday.",
			"I'd like to ask how it went — the driving test on Friday — on "}},
		{"/status details", []string{"Things of yours I'm following: the driving test on Friday.",
			"Next check-in: the driving test on Friday, " + checkIn.Format("Mon 2 Jan 15:04")}},
	}
	for i, s := range steps {
		h.tg.PushText(user, user, s.send)
		sent, err := h.tg.WaitSent(waitCtx(t), i+2)
		if err != nil {
			t.Fatalf("%s: %v", s.send, err)
		}
		for _, w := range s.want {
			if got := sent[i+1].Visible; !strings.Contains(got, w) {
				t.Errorf("%s → %q, want it to contain %q", s.send, got, w)
			}
		}
	}
	if n := len(h.ai.Requests()); n != calls {
		t.Errorf("/thoughts and /status cost %d model calls, want 0", n-calls)
	}

	h.tg.PushText(user, user, "/forget")
	if _, err := h.tg.WaitSent(waitCtx(t), 5); err != nil {
		t.Fatal(err)
	}
	h.tg.PushCallback(user, user, "/forget yes")
	if _, err := h.tg.WaitSent(waitCtx(t), 6); err != nil {
		t.Fatal(err)
	}
	stop()
	st := h.store()
	var left []string
	if err := st.View(func(tx *storage.Tx) error {
		return tx.Scan("plugin_innerlife", nil, func(k, _ []byte) error { left = append(left, fmt.Sprintf("%q", k)); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the inner life's bucket holds %d keys after /forget: %s", len(left), strings.Join(left, " "))
	}
}

// TestInnerLifeBucketFilledBeforeForget guards the test above: without /forget the bucket
// holds the concern, the entry and the journal slot.
func TestInnerLifeBucketFilledBeforeForget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, stop := h.start()
	h.ai.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.Call{
			{Name: "innerlife_concern", Args: `{"action":"open","id":null,"summary":"a new job","kind":"project","check_in_at":null,"note":null}`},
			{Name: "innerlife_journal", Args: `{"kind":"gratitude","text":"Glad they told me about the job."}`},
		}},
		openaitest.Answer("Congratulations!", "active", 0.95),
	)
	h.say("I got the job")
	stop()
	st := h.store()
	tags := map[byte]int{}
	if err := st.View(func(tx *storage.Tx) error {
		return tx.Scan("plugin_innerlife", nil, func(k, _ []byte) error { tags[k[0]]++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if tags['C'] != 1 || tags['J'] != 1 || tags['L'] != 1 {
		t.Errorf("bucket keys by tag %v, want one concern, one entry, one journal slot", tags)
	}
}
