package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// checkinScript makes the model open a concern with a check-in 5 s ahead on the user's
// message, and answer any run without a user message (anima writing first) with a
// question about it.
func checkinScript(ai *openaitest.Server, at time.Time) {
	ai.Enqueue(
		openaitest.Tool("innerlife_concern", fmt.Sprintf(`{"action":"open","id":null,"summary":"driving test this afternoon",`+
			`"kind":"event","check_in_at":%q,"note":null}`, at.Format(time.RFC3339))),
		openaitest.Answer("Good luck — you've got this!", "active", 0.95),
	)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleSystem {
			return openaitest.Answer("How did the driving test go?", "awaiting_answer", 0.9)
		}
		return openaitest.Echo(req)
	})
}

// TestConcernCheckinAskedOnce: a concern opened with a check-in 5 s ahead is asked about
// once, about 5 s later, by a proactive run whose prompt names the concern.
func TestConcernCheckinAskedOnce(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), `proactive:
  enabled: true
  min_silence: 1h
  cooldown: 1s
  followup_after: 1h
  quiet_hours: ""
  max_per_day: 5
`)
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 40*time.Second)
	checkinScript(ai, time.Now().Add(5*time.Second).Truncate(time.Second).Add(time.Second))
	tg.PushText(user, user, "I have my driving test this afternoon!")
	if _, err := tg.WaitSent(ctx, 1); err != nil {
		t.Fatal(err)
	}
	sent, err := tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("the check-in never came: %v", err)
	}
	gap := sent[1].At.Sub(sent[0].At)
	t.Logf("check-in asked %v after the answer (planned 5 s ahead)", gap.Round(10*time.Millisecond))
	if gap < 3*time.Second || gap > 12*time.Second {
		t.Errorf("check-in came %v after the answer, want about 5 s", gap)
	}
	if sent[1].Visible != "How did the driving test go?" {
		t.Errorf("check-in = %q", sent[1].Visible)
	}
	reqs := ai.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	for _, want := range []string{"driving test this afternoon", "due check-in", "a check-in I planned is due"} {
		if !strings.Contains(last, want) {
			t.Errorf("the check-in's prompt lacks %q:\n%s", want, last)
		}
	}
	time.Sleep(4 * time.Second) // a second check-in would come now
	p.stop(t)
	if log := p.stderr.String(); strings.Count(log, "reason=concern_checkin") != 1 {
		t.Errorf("want exactly one wake with reason concern_checkin in the log:\n%s", log)
	}
	if n := len(tg.Sent()); n != 2 {
		t.Errorf("%d messages, want the answer and exactly one check-in", n)
	}
	if n := len(ai.Requests()); n != 3 {
		t.Errorf("%d model calls, want 3 (tool call, answer, one check-in run)", n)
	}
	if v := ai.Violations(); len(v) > 0 {
		t.Errorf("requests broke the API's rules: %v", v)
	}
}

// TestConcernCheckinHeldInQuietHours: the same check-in inside quiet hours sends nothing
// and costs no model call.
func TestConcernCheckinHeldInQuietHours(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	dir := t.TempDir()
	now := time.Now().UTC()
	path := writeConfig(t, dir, tg.URL, ai.URL(), fmt.Sprintf(`proactive:
  enabled: true
  min_silence: 1h
  cooldown: 1s
  followup_after: 1h
  quiet_hours: "%s-%s"
  max_per_day: 5
`, now.Add(-time.Hour).Format("15:04"), now.Add(time.Hour).Format("15:04")))
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 40*time.Second)
	checkinScript(ai, time.Now().Add(5*time.Second))
	tg.PushText(user, user, "I have my driving test this afternoon!")
	if _, err := tg.WaitSent(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(9 * time.Second) // the check-in is due after 5 s; quiet hours hold it
	p.stop(t)
	if n := len(tg.Sent()); n != 1 {
		t.Errorf("%d messages, want only the answer: quiet hours hold the check-in", n)
	}
	if n := len(ai.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (tool call and answer): a held check-in costs nothing", n)
	}
}
