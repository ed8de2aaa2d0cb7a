package bot_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/storage"
)

// TestDeadRunRetried: a run the model refuses is kept as a dead letter (the user gets the
// apology); retried over the running service's control socket once the model answers
// again, the user's message runs again and is answered.
func TestDeadRunRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, stop := h.start()
	defer stop()
	ctx := waitCtx(t)
	h.ai.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(400) })
	h.tg.PushText(user, user, "hello?")
	if sent, err := h.tg.WaitSent(ctx, 1); err != nil || sent[0].Visible != h.cfg.Persona.Apology {
		t.Fatalf("first reply %+v (%v), want the apology", sent, err)
	}
	letters, err := bot.Dead(ctx, h.cfg.Storage.Path, "list")
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 || letters[0].Kind != brain.DeadRunFailed || len(letters[0].Signals) != 1 || letters[0].Signals[0].Text != "hello?" {
		t.Fatalf("dead letters %+v, want the failed run with the user's message", letters)
	}

	h.ai.SetDefault(nil) // the model answers again (echo)
	if _, err := bot.Dead(ctx, h.cfg.Storage.Path, "retry 1"); err != nil {
		t.Fatal(err)
	}
	sent, err := h.tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sent[1].Visible != "echo: hello?" {
		t.Errorf("reply after the retry %q, want the answer to the user's message", sent[1].Visible)
	}
	if letters, err := bot.Dead(ctx, h.cfg.Storage.Path, "list"); err != nil || len(letters) != 0 {
		t.Errorf("dead letters after the retry %+v (%v), want none", letters, err)
	}
	if _, err := bot.Dead(ctx, h.cfg.Storage.Path, "retry 1"); !errors.Is(err, storage.ErrNoDeadLetter) {
		t.Errorf("second retry: err %v, want ErrNoDeadLetter", err)
	}
}

// TestDeadLettersPrunedAfterAWeek: the running service deletes dead letters older than
// storage.DeadKeep (at start, then hourly) and keeps younger ones.
func TestDeadLettersPrunedAfterAWeek(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st, err := storage.Open(h.cfg.Storage.Path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msg := brain.SendMessage{Chat: user, Text: "refused"}
	for _, age := range []time.Duration{storage.DeadKeep + time.Hour, storage.DeadKeep - time.Hour} {
		if _, err := st.Bury(brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: user, User: user, At: time.Now().Add(-age), Message: &msg}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	_, stop := h.start()
	defer stop()
	ctx := waitCtx(t)
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		letters, err := bot.Dead(ctx, h.cfg.Storage.Path, "list")
		if err != nil {
			t.Fatal(err)
		}
		if len(letters) == 1 && letters[0].ID == 2 {
			break
		}
		select {
		case <-poll.C:
		case <-ctx.Done():
			t.Fatalf("dead letters %+v, want only the one younger than a week (id 2)", letters)
		}
	}
}
