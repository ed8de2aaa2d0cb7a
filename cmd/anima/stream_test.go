package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

const streamedText = "Good morning! I slept well, thank you for asking. " +
	"The kettle is on and I was just thinking about the walk you planned for today."

// slowAnswer is a structured answer the fake model writes a few characters at a time.
func slowAnswer(text string, every time.Duration) openaitest.Reply {
	r := openaitest.Answer(text, "active", 0.9)
	r.ChunkDelay = every
	return r
}

// exchange sends the user's texts one by one, each once the previous has its reply, then
// stops anima and returns what was sent: a duplicate of an earlier reply would show
// before a later one.
func exchange(ctx context.Context, t *testing.T, tg *telegramtest.Server, p *proc, texts ...string) []telegramtest.Message {
	t.Helper()
	var sent []telegramtest.Message
	for i, text := range texts {
		sent = say(ctx, t, tg, text, i+1)
	}
	p.stop(t)
	return sent
}

// TestStreamedReplyShowsDrafts: a reply written slowly is shown as a growing draft (HTML,
// one draft id, at most one update per 300 ms, never raw JSON), then sent exactly once.
func TestStreamedReplyShowsDrafts(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	ai.Enqueue(slowAnswer(streamedText, 40*time.Millisecond))

	p := start(t, "run", "--config", path)
	sent := exchange(waitCtx(t, 30*time.Second), t, tg, p, "good morning, did you sleep well?", "ping")
	if sent[0].Visible != streamedText || sent[1].Visible != "echo: ping" {
		t.Fatalf("sent %q, %q; want the streamed reply once, then the echo", sent[0].Visible, sent[1].Visible)
	}
	var first []telegramtest.Draft
	for _, d := range tg.DraftsTo(user) {
		if d.At.Before(sent[0].At) {
			first = append(first, d)
		}
	}
	if len(first) < 2 {
		t.Fatalf("%d drafts before the reply, want at least 2", len(first))
	}
	for i, d := range first {
		if d.DraftID != first[0].DraftID || d.ParseMode != "HTML" {
			t.Errorf("draft %d: id %d, parse mode %q; want id %d, HTML", i, d.DraftID, d.ParseMode, first[0].DraftID)
		}
		if d.Visible == "" || !strings.HasPrefix(streamedText, d.Visible) {
			t.Errorf("draft %d = %q, not a beginning of the reply", i, d.Visible)
		}
		// The pacing is measured where the drafts leave; allow for loopback jitter here.
		if i > 0 && d.At.Sub(first[i-1].At) < telegram.DraftInterval-50*time.Millisecond {
			t.Errorf("drafts %d and %d only %v apart", i-1, i, d.At.Sub(first[i-1].At))
		}
	}
	if ai.Streamed() < 1 {
		t.Error("the model was never asked for a stream")
	}
	if v := ai.Violations(); len(v) != 0 {
		t.Errorf("invalid model requests: %v", v)
	}
}

// TestKillDuringStreamDeliversOnce: SIGKILL while a reply is being streamed (drafts showing)
// loses nothing and repeats nothing: after the restart the reply is sent exactly once.
func TestKillDuringStreamDeliversOnce(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	ai.Enqueue(slowAnswer(streamedText, 500*time.Millisecond)) // still streaming when killed
	ai.Enqueue(openaitest.Answer("Here I am again.", "active", 0.9))

	p := start(t, "run", "--config", path)
	tg.PushText(user, user, "tell me about your morning")
	ctx := waitCtx(t, 40*time.Second)
	if _, err := tg.WaitDrafts(ctx, 1); err != nil {
		t.Fatalf("no draft shown: %v", err)
	}
	p.kill(t)
	if n := len(tg.Sent()); n != 0 {
		t.Fatalf("%d messages sent before the crash", n)
	}

	p = start(t, "run", "--config", path)
	if _, err := tg.WaitSent(ctx, 1); err != nil {
		t.Fatalf("no reply after restart: %v", err)
	}
	tg.PushText(user, user, "ping")
	sent, err := tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	if sent[0].Visible != "Here I am again." || sent[1].Visible != "echo: ping" {
		t.Fatalf("sent %q, %q; want the reply once, then the echo", sent[0].Visible, sent[1].Visible)
	}
	if n := len(tg.Sent()); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
}

// TestStreamRefusedFallsBack: an endpoint that refuses stream: true (400) still gets the
// reply asked for, sent once, without drafts and without an apology.
func TestStreamRefusedFallsBack(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	ai.SetStreaming(openaitest.StreamRefuse)

	p := start(t, "run", "--config", path)
	sent := exchange(waitCtx(t, 30*time.Second), t, tg, p, "one", "two")
	if sent[0].Visible != "echo: one" || sent[1].Visible != "echo: two" {
		t.Fatalf("sent %q, %q", sent[0].Visible, sent[1].Visible)
	}
	if d := tg.Drafts(); len(d) != 0 {
		t.Errorf("%d drafts, want none", len(d))
	}
	if n := ai.Streamed(); n != 1 {
		t.Errorf("%d streamed requests, want 1: after the refusal replies are asked whole", n)
	}
}

// TestDraftRefusedFallsBack: a Bot API that answers sendMessageDraft with 400 costs
// nothing visible: the reply is sent once.
func TestDraftRefusedFallsBack(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	ai.Enqueue(slowAnswer(streamedText, 20*time.Millisecond))
	tg.FailNext("sendMessageDraft", 1, 400, 0)

	p := start(t, "run", "--config", path)
	sent := exchange(waitCtx(t, 30*time.Second), t, tg, p, "hello", "ping")
	if sent[0].Visible != streamedText || sent[1].Visible != "echo: ping" {
		t.Fatalf("sent %q, %q", sent[0].Visible, sent[1].Visible)
	}
	if n := len(tg.CallsTo("sendMessageDraft")); n < 1 {
		t.Fatal("no draft was tried")
	}
	for _, d := range tg.Drafts() {
		if d.At.Before(sent[0].At) {
			t.Errorf("draft %q shown after the refusal in the same reply", d.Visible)
		}
	}
}

// TestStreamRepliesOff: telegram.stream_replies: false sends replies whole, as before.
func TestStreamRepliesOff(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	editConfig(t, path, "  allowed_users:", "  stream_replies: false\n  allowed_users:")
	p := start(t, "run", "--config", path)
	say(waitCtx(t, 30*time.Second), t, tg, "hi", 1)
	p.stop(t)
	if ai.Streamed() != 0 || len(tg.Drafts()) != 0 {
		t.Fatalf("streamed %d, drafts %d; want none", ai.Streamed(), len(tg.Drafts()))
	}
}
