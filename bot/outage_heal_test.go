package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// outageFailing makes the fake model endpoint answer every request with a 503.
func outageFailing(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(503) }

// TestOutageHealsItself: the model endpoint fails → the user gets one notice (not the
// "say that again" apology); it recovers, and without the user writing again the held
// message is answered, once, within one probe interval (5 s) of the recovery; a message
// after it is answered at once, with no second notice. The seconds are anima's clock.
func TestOutageHealsItself(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	clock := h.useClock(testNoon())
	h.ai.SetDefault(outageFailing)
	addrs, stop := h.start()
	ctx := testCtx(t, 60*time.Second)

	h.tg.PushText(user, user, "first: are you there?")
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no notice: %v", err)
	}
	notice := sent[0]
	if !strings.Contains(notice.Visible, "as soon as I can") || strings.Contains(notice.Visible, "say that again") {
		t.Errorf("notice = %q, want a promise to answer, not a request to repeat", notice.Visible)
	}
	failed := len(h.ai.Requests())

	// The endpoint is back two seconds after the notice; nobody writes. The held chat's
	// next probe comes as the probe gap (5 s from the last failed request) ends.
	advance(t, clock, addrs.Metrics, 2*time.Second)
	h.ai.SetDefault(nil)
	back := clock.Now()
	for len(h.ai.Requests()) == failed && clock.Now().Sub(back) < 10*time.Second {
		advance(t, clock, addrs.Metrics, 250*time.Millisecond)
	}
	lag := clock.Now().Sub(back)
	sent, err = h.tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("the held message was not answered after the endpoint recovered: %v", err)
	}
	t.Logf("held message answered %v after the model came back (anima's clock)", lag)
	if lag > 6*time.Second {
		t.Errorf("the held answer came %v after the model was back; want within one probe interval (5s) and a tick", lag)
	}
	if sent[1].Visible != "echo: first: are you there?" {
		t.Errorf("answer = %q, want the model's answer to the held message", sent[1].Visible)
	}
	pushed := clock.Now()
	h.tg.PushText(user, user, "second: hello?")
	sent, err = h.tg.WaitSent(ctx, 3) // anima's clock stands still: no probe gap can pass
	if err != nil {
		t.Fatalf("no answer to the second message: %v", err)
	}
	if lag := clock.Now().Sub(pushed); lag > 3*time.Second || sent[2].Visible != "echo: second: hello?" {
		t.Errorf("second answer %q came %v after the message; want it at once", sent[2].Visible, lag)
	}
	// A duplicate or a second notice would come now, past two probe intervals.
	advance(t, clock, addrs.Metrics, 10*time.Second)
	modelQuiet(t, ctx, h.ai, addrs.Metrics)
	stop()

	if n := len(h.tg.Sent()); n != 3 {
		for _, m := range h.tg.Sent() {
			t.Logf("sent: %q", m.Visible)
		}
		t.Fatalf("%d messages sent, want the notice and two answers", n)
	}
	// After the recovery: the probe that answered the held message, then the second run.
	after := h.ai.Requests()[failed:]
	if len(after) != 2 {
		t.Fatalf("%d model requests after the recovery, want 2 (the probe, the second message)", len(after))
	}
	if raw := string(after[0].Raw); strings.Count(raw, "first: are you there?") != 1 {
		t.Errorf("the probe's prompt does not hold the held message once:\n%s", raw)
	}
}

// TestHeldMessageSurvivesRestart: a message held during an outage is still in the store's
// inbox after a restart (bot.Run stopped and started again on the same store, as SIGTERM
// does) and is answered once the model is back.
func TestHeldMessageSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.useClock(testNoon())
	h.ai.SetDefault(outageFailing)
	_, stop := h.start()
	ctx := testCtx(t, 60*time.Second)
	h.tg.PushText(user, user, "remember to answer me")
	if _, err := h.tg.WaitSent(ctx, 1); err != nil {
		t.Fatalf("no notice: %v", err)
	}
	stop()

	h.ai.SetDefault(nil)
	addrs, stop := h.start()
	sent, err := h.tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("the held message was not answered after the restart: %v", err)
	}
	if sent[1].Visible != "echo: remember to answer me" {
		t.Errorf("answer = %q", sent[1].Visible)
	}
	modelQuiet(t, ctx, h.ai, addrs.Metrics)
	stop()
	if n := len(h.tg.Sent()); n != 2 {
		t.Errorf("%d messages, want the notice and one answer", n)
	}
}
