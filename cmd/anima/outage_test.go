package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// failing makes the fake model endpoint answer every request with a 503.
func failing(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(503) }

// TestOutageHealsItself: the model endpoint fails → the user gets one notice (not the
// "say that again" apology); it recovers, and without the user writing again the held
// message is answered, once, within one probe interval (5 s) of the recovery; a message
// after it is answered at once, with no second notice.
func TestOutageHealsItself(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(failing)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 60*time.Second)

	tg.PushText(user, user, "first: are you there?")
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no notice: %v", err)
	}
	notice := sent[0]
	if !strings.Contains(notice.Visible, "as soon as I can") || strings.Contains(notice.Visible, "say that again") {
		t.Errorf("notice = %q, want a promise to answer, not a request to repeat", notice.Visible)
	}
	failed := len(ai.Requests())

	// The endpoint is back two seconds after the notice; nobody writes. The held chat's
	// next probe comes as the probe gap (5 s from the last failed request) ends.
	time.Sleep(2 * time.Second)
	ai.SetDefault(nil)
	back := time.Now()
	sent, err = tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("the held message was not answered after the endpoint recovered: %v", err)
	}
	lag := sent[1].At.Sub(back)
	t.Logf("held message answered %v after the model came back (real binary)", lag.Round(time.Millisecond))
	if lag > 6*time.Second {
		t.Errorf("the held answer came %v after the model was back; want within one probe interval (5s) and a tick", lag)
	}
	if sent[1].Visible != "echo: first: are you there?" {
		t.Errorf("answer = %q, want the model's answer to the held message", sent[1].Visible)
	}
	pushed := time.Now()
	tg.PushText(user, user, "second: hello?")
	sent, err = tg.WaitSent(ctx, 3)
	if err != nil {
		t.Fatalf("no answer to the second message: %v", err)
	}
	if lag := sent[2].At.Sub(pushed); lag > 3*time.Second || sent[2].Visible != "echo: second: hello?" {
		t.Errorf("second answer %q came %v after the message; want it at once", sent[2].Visible, lag)
	}
	time.Sleep(1500 * time.Millisecond) // a duplicate or a second notice would come now
	p.stop(t)

	if n := len(tg.Sent()); n != 3 {
		for _, m := range tg.Sent() {
			t.Logf("sent: %q", m.Visible)
		}
		t.Fatalf("%d messages sent, want the notice and two answers", n)
	}
	// After the recovery: the probe that answered the held message, then the second run.
	after := ai.Requests()[failed:]
	if len(after) != 2 {
		t.Fatalf("%d model requests after the recovery, want 2 (the probe, the second message)", len(after))
	}
	if raw := string(after[0].Raw); strings.Count(raw, "first: are you there?") != 1 {
		t.Errorf("the probe's prompt does not hold the held message once:\n%s", raw)
	}
}

// TestHeldMessageSurvivesRestart: a message held during an outage is still in the store's
// inbox after a restart and is answered once the model is back.
func TestHeldMessageSurvivesRestart(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(failing)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 60*time.Second)
	tg.PushText(user, user, "remember to answer me")
	if _, err := tg.WaitSent(ctx, 1); err != nil {
		t.Fatalf("no notice: %v", err)
	}
	p.stop(t)

	ai.SetDefault(nil)
	p = start(t, "run", "--config", path)
	sent, err := tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("the held message was not answered after the restart: %v", err)
	}
	if sent[1].Visible != "echo: remember to answer me" {
		t.Errorf("answer = %q", sent[1].Visible)
	}
	time.Sleep(time.Second)
	p.stop(t)
	if n := len(tg.Sent()); n != 2 {
		t.Errorf("%d messages, want the notice and one answer", n)
	}
}
