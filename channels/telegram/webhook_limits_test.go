package telegram

import (
	"net/http"
	"testing"
	"time"

	"github.com/anima-bot/anima/channels/listener"
	"github.com/anima-bot/anima/channels/listener/listenertest"
)

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
