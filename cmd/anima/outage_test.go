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
// "say that again" apology); it recovers; a second message within the old breaker window
// is answered at once, and the first message is answered too — in one run, each exactly
// once — with no second notice.
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

	// The endpoint is back, two seconds after the notice; the breaker (opened by the
	// failures) would stay shut for 30 s under the old rules. The user writes again once a
	// probe is allowed (5 s after the last failed request).
	time.Sleep(2 * time.Second)
	ai.SetDefault(nil)
	time.Sleep(3500 * time.Millisecond)
	pushed := time.Now()
	tg.PushText(user, user, "second: hello?")
	sent, err = tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("no answer after the endpoint recovered: %v", err)
	}
	lag := sent[1].At.Sub(pushed)
	t.Logf("answered %v after the second message (notice %q)", lag.Round(time.Millisecond), notice.Visible)
	if lag > 3*time.Second {
		t.Errorf("answer came %v after the second message; want it at once", lag)
	}
	if !strings.Contains(sent[1].Visible, "echo:") {
		t.Errorf("answer = %q, want the model's answer", sent[1].Visible)
	}
	time.Sleep(1500 * time.Millisecond) // a duplicate or a second notice would come now
	p.stop(t)

	if n := len(tg.Sent()); n != 2 {
		for _, m := range tg.Sent() {
			t.Logf("sent: %q", m.Visible)
		}
		t.Fatalf("%d messages sent, want the notice and one answer", n)
	}
	// Exactly one request after the recovery — the probe, which answered both messages.
	after := ai.Requests()[failed:]
	if len(after) != 1 {
		t.Fatalf("%d model requests after the recovery, want 1 (one run for both messages)", len(after))
	}
	raw := string(after[0].Raw)
	for _, want := range []string{"first: are you there?", "second: hello?"} {
		if c := strings.Count(raw, want); c != 1 {
			t.Errorf("the answering prompt holds %q %d times, want once", want, c)
		}
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
