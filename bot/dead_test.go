package bot_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
	"github.com/anima-bot/anima/storage"
)

// TestDeadRunRetried: a run the model refuses is kept as a dead letter (the user gets the
// apology); retried over the running service's control socket once the model answers
// again, the user's message runs again and is answered.
func TestDeadRunRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.run()
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
	msg := brain.SendMessage{Chat: user, Text: "refused"}
	var letters []brain.DeadLetter
	for _, age := range []time.Duration{storage.DeadKeep + time.Hour, storage.DeadKeep - time.Hour} {
		letters = append(letters, brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: user, User: user, At: time.Now().Add(-age), Message: &msg})
	}
	h.bury(letters...)
	h.run()
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

// TestDeadSplitReplyRetrySendsTheRest: a reply split in two whose second part Telegram
// refuses for good is kept with its first part marked delivered; retried, only the second
// part is sent, through the real outbox and channel.
func TestDeadSplitReplyRetrySendsTheRest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.Telegram.StreamReplies = false
	h.run()
	ctx := waitCtx(t)
	// The echo answer, "echo: " and 1,000 words of 6 letters, is split in two parts.
	words := strings.TrimSpace(strings.Repeat("words ", 1000))
	h.tg.InjectFault("sendMessage", telegramtest.Fault{Pass: true})
	h.tg.InjectFault("sendMessage", telegramtest.Fault{Code: 400, Description: "Bad Request: message to be replied not found"})
	h.tg.PushText(user, user, words)
	if _, err := h.tg.WaitCalls(ctx, "sendMessage", 2); err != nil {
		t.Fatal(err)
	}
	var letters []brain.DeadLetter
	waitUntil(t, ctx, "the refused part kept as a dead letter", func() bool {
		var err error
		if letters, err = bot.Dead(ctx, h.cfg.Storage.Path, "list"); err != nil {
			t.Fatal(err)
		}
		return len(letters) > 0
	})
	d := letters[0]
	if d.Kind != brain.DeadUndeliverable || d.Message == nil || d.Message.SkipParts != 1 {
		t.Fatalf("dead letter %+v, want the refused reply with its 1 part delivered recorded", d)
	}
	if _, err := bot.Dead(ctx, h.cfg.Storage.Path, "retry 1"); err != nil {
		t.Fatal(err)
	}
	sent, err := h.tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent[0].Visible, "echo: words") {
		t.Errorf("first part sent %.20q…, want the start of the reply", sent[0].Visible)
	}
	if strings.HasPrefix(sent[1].Visible, "echo:") || !strings.HasSuffix(sent[1].Visible, "words") {
		t.Errorf("sent %.20q… after the retry, want only the second part (the first was delivered)", sent[1].Visible)
	}
	if got, want := strings.Fields(sent[0].Visible+" "+sent[1].Visible), strings.Fields("echo: "+words); !slices.Equal(got, want) {
		t.Errorf("the two parts sent hold %d words, want the reply's %d", len(got), len(want))
	}
}

// TestDeadRetryRefusedForRemovedUser: the running service refuses to retry a dead letter
// of a user no longer in telegram.allowed_users, says so, sends nothing and keeps it.
func TestDeadRetryRefusedForRemovedUser(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const removed = 5151
	msg := brain.SendMessage{Chat: removed, Text: "for someone gone", Kind: brain.KindReply}
	h.bury(brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: removed, User: removed, At: time.Now(), Message: &msg})
	h.run()
	ctx := waitCtx(t)
	_, err := bot.Dead(ctx, h.cfg.Storage.Path, "retry 1")
	if !errors.Is(err, bot.ErrNotAllowed) || !strings.Contains(err.Error(), "user 5151") || !strings.Contains(err.Error(), "kept") {
		t.Fatalf("retry for a removed user: err %v, want ErrNotAllowed naming the user and saying the letter is kept", err)
	}
	if letters, err := bot.Dead(ctx, h.cfg.Storage.Path, "list"); err != nil || len(letters) != 1 || letters[0].ID != 1 {
		t.Errorf("dead letters after the refused retry %+v (%v), want it kept", letters, err)
	}
	if calls := h.tg.CallsTo("sendMessage"); len(calls) != 0 {
		t.Errorf("%d messages sent, want none", len(calls))
	}
}

// TestMayRetry: a retry is allowed only if every user the letter concerns (its user, a
// private chat's, its signals' senders) is allowed, or anima is public.
func TestMayRetry(t *testing.T) {
	t.Parallel()
	const ann, ben, grp = 1, 2, -100
	tg := config.TelegramConfig{AllowedUsers: []int64{ann}}
	for _, tc := range []struct {
		name    string
		d       brain.DeadLetter
		public  bool
		refused bool
	}{
		{"allowed user", brain.DeadLetter{Chat: ann, User: ann}, false, false},
		{"removed user", brain.DeadLetter{Chat: ben, User: ben}, false, true},
		{"removed user, public", brain.DeadLetter{Chat: ben, User: ben}, true, false},
		{"private chat of a removed user, no user recorded", brain.DeadLetter{Chat: ben}, false, true},
		{"group letter of nobody", brain.DeadLetter{Chat: grp}, false, false},
		{"group run with a removed sender", brain.DeadLetter{Chat: grp, User: ann,
			Signals: []brain.Signal{{User: ann}, {User: ben}}}, false, true},
		{"group run of allowed senders", brain.DeadLetter{Chat: grp, User: ann,
			Signals: []brain.Signal{{User: ann}, {}}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := tg
			tg.Public = tc.public
			err := bot.MayRetry(tc.d, tg)
			if refused := errors.Is(err, bot.ErrNotAllowed); refused != tc.refused || (err != nil && !refused) {
				t.Errorf("MayRetry = %v, want refused %v", err, tc.refused)
			}
		})
	}
}
