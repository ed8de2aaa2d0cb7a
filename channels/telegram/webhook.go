package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/listener"
)

// secretHeader carries the webhook secret token.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxWebhookBody bounds an update's size; Telegram's are far smaller.
const maxWebhookBody = 1 << 20

// Limits of the webhook server (documented in docs/webhook.md). Telegram delivers one
// small update per request over at most a few connections; anything that holds a
// connection without finishing a request, or idles on a keep-alive, is cut off, and
// beyond webhookMaxConns connections new ones wait to be accepted.
const (
	webhookReadHeaderTimeout = 5 * time.Second
	webhookReadTimeout       = 10 * time.Second // headers and a body of up to maxWebhookBody
	webhookWriteTimeout      = 30 * time.Second // recording the update comes before the answer
	webhookIdleTimeout       = 60 * time.Second
	webhookMaxHeaderBytes    = 16 << 10
	webhookMaxConns          = 100
)

func webhookLimits() listener.Limits {
	return listener.Limits{
		ReadHeader: webhookReadHeaderTimeout, Read: webhookReadTimeout, Write: webhookWriteTimeout,
		Idle: webhookIdleTimeout, MaxHeaderBytes: webhookMaxHeaderBytes, MaxConns: webhookMaxConns,
	}
}

// runWebhook serves the webhook until ctx ends, registering it with setWebhook first
// when PublicURL is set (at PublicURL + Path, with the secret token and max_connections
// 1 so updates arrive in order: a lower id arriving after a higher one would otherwise
// be taken for a duplicate).
func (c *Channel) runWebhook(ctx context.Context) error {
	offset, err := c.rec.Offset(source)
	if err != nil {
		return fmt.Errorf("telegram: read stored offset: %w", err)
	}
	ln, err := net.Listen("tcp", c.cfg.Webhook.Listen)
	if err != nil {
		return fmt.Errorf("telegram: webhook listen %s: %w", c.cfg.Webhook.Listen, err)
	}
	addr := ln.Addr()
	c.addr.Store(&addr)

	wh := &webhook{c: c, offset: offset}
	mux := http.NewServeMux()
	mux.HandleFunc(c.cfg.Webhook.Path, func(w http.ResponseWriter, r *http.Request) { wh.serve(ctx, w, r) })
	srv, ln := listener.Server(ln, mux, c.webhookLimits)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	c.log.Info("telegram webhook listening", "addr", addr.String(), "path", brain.RedactURL(c.cfg.Webhook.Path))
	close(c.ready)

	regCtx, stopReg := context.WithCancel(ctx)
	defer stopReg()
	regDone := make(chan struct{})
	go func() {
		defer close(regDone)
		if c.cfg.Webhook.PublicURL != "" {
			c.registerWebhook(regCtx)
		}
	}()

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("telegram: webhook server: %w", err)
	}
	stopReg() // a registration still retrying must not hold Run open
	<-regDone
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	return runErr
}

// webhookURL is where Telegram is told to deliver: PublicURL + Path.
func (c *Channel) webhookURL() string {
	return strings.TrimRight(c.cfg.Webhook.PublicURL, "/") + c.cfg.Webhook.Path
}

// registerWebhook calls setWebhook until it succeeds or ctx ends.
func (c *Channel) registerWebhook(ctx context.Context) {
	for attempt := 0; ; attempt++ {
		_, err := c.bot.SetWebhook(ctx, &bot.SetWebhookParams{
			URL:            c.webhookURL(),
			SecretToken:    c.cfg.Webhook.SecretToken,
			AllowedUpdates: allowedUpdates,
			MaxConnections: 1,
		})
		err = c.redact(err)
		if err == nil {
			c.log.Info("telegram webhook registered", "url", brain.RedactURL(c.webhookURL()))
			return
		}
		if ctx.Err() != nil {
			return
		}
		d := c.backoff(attempt)
		c.log.Error("telegram setWebhook failed, retrying", "err", err, "retry_in", d)
		if c.sleep(ctx, d) != nil {
			return
		}
	}
}

// rebaseGap is how far below the expected update id an update must be to count as
// Telegram re-basing its ids (after a week without updates the next id is chosen at
// random) rather than a redelivery: redeliveries are of the last few updates.
const rebaseGap = 1000

// isDuplicate reports whether update id was already recorded, given the next expected id.
func isDuplicate(id, next int64) bool { return id < next && next-id <= rebaseGap }

// webhook is the HTTP handler for Telegram's deliveries.
type webhook struct {
	c      *Channel
	offset int64 // next expected update id; guarded by c.recMu
}

// serve checks the secret (401, before reading the body), the method (405), reads a
// bounded body, skips duplicates (200), records the update and answers 200 only after
// recording succeeded (500 otherwise, so Telegram retries), then submits with runCtx
// (Run's context: the request's own ends with the response).
//
// Malformed JSON is answered 200 after logging: Telegram would otherwise redeliver the
// same bytes forever and block every later update behind it.
func (wh *webhook) serve(runCtx context.Context, w http.ResponseWriter, r *http.Request) {
	c := wh.c
	got := r.Header.Get(secretHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.cfg.Webhook.SecretToken)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			c.met.updates.WithLabelValues(kindMalformed).Inc()
			c.log.Warn("telegram webhook body too large, dropped", "limit_bytes", maxWebhookBody)
			w.WriteHeader(http.StatusOK) // redelivery would fail the same way
			return
		}
		http.Error(w, "read error", http.StatusBadRequest)
		return
	}
	var head struct {
		ID *int64 `json:"update_id"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID == nil {
		c.met.updates.WithLabelValues(kindMalformed).Inc()
		c.log.Warn("telegram webhook update malformed, dropped", "bytes", len(body))
		w.WriteHeader(http.StatusOK)
		return
	}
	id := *head.ID

	c.recMu.Lock()
	if isDuplicate(id, wh.offset) {
		c.recMu.Unlock()
		c.met.updates.WithLabelValues(kindDuplicate).Inc()
		c.log.Debug("telegram webhook duplicate update skipped", "update_id", id)
		w.WriteHeader(http.StatusOK)
		return
	}
	var sigs []brain.Signal
	v, err := c.decode(c.classifier(), body)
	if err != nil {
		c.met.updates.WithLabelValues(kindMalformed).Inc()
		c.log.Warn("telegram webhook update malformed, recorded as seen", "update_id", id, "err", err)
	} else {
		c.account(id, v)
		if v.ok {
			sigs = []brain.Signal{v.sig}
		}
	}
	recorded, err := c.rec.Record(source, sigs, id+1)
	if err != nil {
		c.recMu.Unlock()
		c.log.Error("telegram webhook record failed; Telegram will redeliver", "update_id", id, "err", err)
		http.Error(w, "record failed", http.StatusInternalServerError)
		return
	}
	wh.offset = id + 1
	c.recMu.Unlock()

	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if v.callbackID != "" {
		c.answerCallbacks(runCtx, []string{v.callbackID})
	}
	if len(recorded) > 0 {
		if err := c.sink.Submit(runCtx, recorded...); err != nil {
			c.log.Debug("telegram submit ended with run", "err", err)
		}
	}
}
