package telegram

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/channels/listener"
	"github.com/anima-bot/anima/channels/listener/listenertest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

const secret = "s3cret-Token_1"

func webhookHarness(t *testing.T, offset int64) (*harness, string) {
	t.Helper()
	h := newHarness(t, offset, func(c *Config, _ *Options) {
		c.Mode = ModeWebhook
		c.Webhook = WebhookConfig{Listen: "127.0.0.1:0", Path: "/tg/hook", PublicURL: "https://anima.example.org/base/", SecretToken: secret}
	})
	h.start(t)
	return h, "http://" + h.ch.Addr().String() + "/tg/hook"
}

func textUpdate(id int64, user int64, text string) models.Update {
	m := telegramtest.TextMessage(user, user, models.ChatTypePrivate, text)
	m.ID, m.Date = int(id)+500, 1700000000
	return models.Update{ID: id, Message: &m}
}

func TestWebhookSecret(t *testing.T) {
	t.Parallel()
	h, url := webhookHarness(t, 0)
	ctx := testCtx(t)
	for _, s := range []string{"", "wrong", secret + "x"} {
		status, err := telegramtest.PostWebhook(ctx, url, s, textUpdate(10, alice, "sneaky"))
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusUnauthorized {
			t.Errorf("secret %q: status %d, want 401", s, status)
		}
	}
	if sigs, off := h.rec.Snapshot(); len(sigs) != 0 || off != 0 || h.rec.Calls() != 0 {
		t.Fatalf("unauthenticated delivery recorded: %v offset %d", sigs, off)
	}
	// GET with the right secret: 405.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set(telegramtest.SecretHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
}

func TestWebhookRecordsThenAnswers(t *testing.T) {
	t.Parallel()
	h, url := webhookHarness(t, 0)
	ctx := testCtx(t)

	if err := h.srv.WaitFor(ctx, func() bool { return len(h.srv.Webhooks()) == 1 }); err != nil {
		t.Fatal("setWebhook not called:", err)
	}
	wh := h.srv.Webhooks()[0]
	if wh.URL != "https://anima.example.org/base/tg/hook" || wh.SecretToken != secret || wh.MaxConnections != 1 {
		t.Errorf("setWebhook = %+v", wh)
	}

	status, err := telegramtest.PostWebhook(ctx, url, secret, textUpdate(10, alice, "hi"))
	if err != nil || status != http.StatusOK {
		t.Fatalf("deliver: %d %v", status, err)
	}
	// 200 came after the record: it is there now, without waiting.
	sigs, off := h.rec.Snapshot()
	if len(sigs) != 1 || sigs[0].Text != "hi" || off != 11 {
		t.Fatalf("after 200: signals %+v offset %d", sigs, off)
	}
	if sig := h.sink.next(t); sig.Ref != "10" {
		t.Errorf("submitted %+v", sig)
	}

	// Redelivery of the same id (Telegram did not see our 200): skipped.
	if status, _ := telegramtest.PostWebhook(ctx, url, secret, textUpdate(10, alice, "hi")); status != http.StatusOK {
		t.Errorf("duplicate: %d", status)
	}
	// Malformed JSON: 200 (no redelivery loop), nothing recorded.
	if status, _ := telegramtest.PostWebhook(ctx, url, secret, []byte(`{"update_id":`)); status != http.StatusOK {
		t.Errorf("malformed: %d", status)
	}
	// An unauthorised user's update is confirmed but yields nothing.
	if status, _ := telegramtest.PostWebhook(ctx, url, secret, textUpdate(11, bob, "hello")); status != http.StatusOK {
		t.Errorf("unauthorised: %d", status)
	}
	if sigs, off := h.rec.Snapshot(); len(sigs) != 1 || off != 12 {
		t.Errorf("signals %d offset %d, want 1 and 12", len(sigs), off)
	}

	// A failed record answers 500 so Telegram retries; the retry then succeeds.
	h.rec.FailNext(1)
	if status, _ := telegramtest.PostWebhook(ctx, url, secret, textUpdate(12, alice, "again")); status != http.StatusInternalServerError {
		t.Errorf("failed record: %d, want 500", status)
	}
	if status, _ := telegramtest.PostWebhook(ctx, url, secret, textUpdate(12, alice, "again")); status != http.StatusOK {
		t.Errorf("retry: %d", status)
	}
	if sigs, _ := h.rec.Snapshot(); len(sigs) != 2 || !strings.Contains(sigs[1].Text, "again") {
		t.Errorf("signals %+v", sigs)
	}
}

func TestWebhookSkipsBelowStoredOffset(t *testing.T) {
	t.Parallel()
	h, url := webhookHarness(t, 50)
	ctx := testCtx(t)
	if status, _ := telegramtest.PostWebhook(ctx, url, secret, textUpdate(49, alice, "old")); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if h.rec.Calls() != 0 {
		t.Fatalf("update below stored offset was recorded")
	}
}

// TestWebhookFollowsRebasedIDs: after a week without updates Telegram picks the next
// update id at random, possibly far below the last one; those updates are new, not
// duplicates, and redeliveries of them are still skipped.
func TestWebhookFollowsRebasedIDs(t *testing.T) {
	t.Parallel()
	h, url := webhookHarness(t, 5_000_000)
	ctx := testCtx(t)
	for _, u := range []models.Update{textUpdate(17, alice, "back after a quiet week"), textUpdate(18, alice, "hello?"), textUpdate(17, alice, "back after a quiet week")} {
		if status, err := telegramtest.PostWebhook(ctx, url, secret, u); err != nil || status != http.StatusOK {
			t.Fatalf("update %d: status %d, %v", u.ID, status, err)
		}
	}
	sigs, offset := h.rec.Snapshot()
	if len(sigs) != 2 || sigs[0].Text != "back after a quiet week" || sigs[1].Text != "hello?" {
		t.Fatalf("recorded %+v, want the two re-based updates once each", sigs)
	}
	if offset != 19 {
		t.Errorf("stored offset %d, want 19 (following the re-based ids)", offset)
	}
}

// limitedWebhook starts a webhook channel whose server has limits lim.
func limitedWebhook(t *testing.T, lim listener.Limits) string {
	t.Helper()
	h := newHarness(t, 0, func(c *Config, _ *Options) {
		c.Mode = ModeWebhook
		c.Webhook = WebhookConfig{Listen: "127.0.0.1:0", Path: "/tg/hook", SecretToken: secret}
	})
	h.ch.webhookLimits = lim
	h.start(t)
	return h.ch.Addr().String()
}

func TestWebhookServerTimeouts(t *testing.T) {
	t.Parallel()
	lim := webhookLimits()
	lim.Idle, lim.ReadHeader = 150*time.Millisecond, 150*time.Millisecond
	listenertest.CheckTimeouts(t, limitedWebhook(t, lim), "/tg/hook", http.StatusUnauthorized) // no secret: 401, connection kept
}

func TestWebhookServerCapsConnections(t *testing.T) {
	t.Parallel()
	lim := webhookLimits()
	lim.MaxConns = 2
	listenertest.CheckCap(t, limitedWebhook(t, lim), "/tg/hook", http.StatusUnauthorized)
}

func TestWebhookDefaultLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	lim := h.ch.webhookLimits
	if lim != webhookLimits() || lim.ReadHeader <= 0 || lim.Read <= 0 || lim.Write <= 0 || lim.Idle <= 0 ||
		lim.MaxHeaderBytes <= 0 || lim.MaxConns <= 0 {
		t.Errorf("webhook limits = %+v", lim)
	}
}

// TestWebhookLogHidesAKeyInThePath: a webhook path may hold a secret of its own (a
// random segment Telegram alone knows); the lines that say where the webhook listens and
// what was registered show the path and the URL with it redacted (issue 33), and
// setWebhook is still given the URL whole.
func TestWebhookLogHidesAKeyInThePath(t *testing.T) {
	t.Parallel()
	const key = "Zm9vYmFyYmF6cXV4MTIzNDU2"
	logs := &lineWaiter{want: "telegram webhook registered", seen: make(chan struct{})}
	h := newHarness(t, 0, func(c *Config, o *Options) {
		c.Mode = ModeWebhook
		c.Webhook = WebhookConfig{Listen: "127.0.0.1:0", Path: "/tg/" + key, PublicURL: "https://anima.example.org/base/", SecretToken: secret}
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	h.start(t)
	select {
	case <-logs.seen:
	case <-testCtx(t).Done():
		t.Fatalf("the webhook was not registered:\n%s", logs.buf.String())
	}
	if wh := h.srv.Webhooks(); len(wh) != 1 || wh[0].URL != "https://anima.example.org/base/tg/"+key {
		t.Errorf("setWebhook got %+v, want the URL whole", wh)
	}
	if strings.Contains(logs.buf.String(), key) || !strings.Contains(logs.buf.String(), "https://anima.example.org/base/tg/***") {
		t.Errorf("the log shows the path's key, or not the redacted URL:\n%s", logs.buf.String())
	}
}

// lineWaiter is a log's writer that closes seen once a line holding want is written.
type lineWaiter struct {
	buf  braintest.Buffer
	want string
	once sync.Once
	seen chan struct{}
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}
