package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// apiError is a Bot API error answer to our own getUpdates request.
type apiError struct {
	Code        int
	Description string
	RetryAfter  int
}

func (e *apiError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("telegram api error %d: %s (retry after %ds)", e.Code, e.Description, e.RetryAfter)
	}
	return fmt.Sprintf("telegram api error %d: %s", e.Code, e.Description)
}

// runPolling deletes any webhook, then runs the getUpdates loop until ctx ends.
//
// For each batch: decode, classify, Record (signals and the next offset in one
// transaction, also when no update became a signal), and only then ask for the next
// batch with the higher offset (which confirms the batch to Telegram). Recorded signals
// are submitted before the next getUpdates, so a full core-loop queue holds back polling.
func (c *Channel) runPolling(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		_, err := c.bot.DeleteWebhook(ctx, nil)
		err = c.redact(err)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		d := c.backoff(attempt)
		c.log.Warn("telegram deleteWebhook failed, retrying", "err", err, "retry_in", d)
		if c.sleep(ctx, d) != nil {
			return nil
		}
	}
	offset, err := c.rec.Offset(source)
	if err != nil {
		return fmt.Errorf("telegram: read stored offset: %w", err)
	}
	close(c.ready)
	c.log.Info("telegram polling started", "offset", offset)

	failures := 0       // consecutive getUpdates failures
	recordFailures := 0 // consecutive Record failures: a getUpdates in between does not reset them
	for {
		raws, err := c.getUpdates(ctx, offset)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			d := c.pollBackoff(failures, err)
			failures++
			if c.sleep(ctx, d) != nil {
				return nil
			}
			continue
		}
		if len(raws) == 0 {
			failures = 0
			continue
		}
		sigs, callbacks, next := c.decodeBatch(raws, offset)
		if next == offset {
			// Nothing to confirm (no readable id, or only updates already recorded):
			// Telegram answers the same batch at once, so wait instead of spinning.
			d := c.backoff(failures)
			failures++
			c.log.Warn("telegram getUpdates returned nothing to confirm, retrying",
				"updates", len(raws), "offset", offset, "retry_in", d)
			if c.sleep(ctx, d) != nil {
				return nil
			}
			continue
		}
		failures = 0
		recorded, err := c.rec.Record(source, sigs, next)
		if err != nil {
			// Not confirmed: Telegram sends the batch again after the backoff.
			d := c.backoff(recordFailures)
			recordFailures++
			c.log.Error("telegram record updates failed", "err", err, "retry_in", d)
			if c.sleep(ctx, d) != nil {
				return nil
			}
			continue
		}
		recordFailures = 0
		offset = next
		c.answerCallbacks(ctx, callbacks)
		if len(recorded) > 0 {
			if err := c.sink.Submit(ctx, recorded...); err != nil {
				return nil // ctx ended; the signals are in the inbox
			}
		}
	}
}

// pollBackoff logs a getUpdates failure and returns how long to wait.
func (c *Channel) pollBackoff(failures int, err error) time.Duration {
	d := c.backoff(failures)
	var ae *apiError
	if errors.As(err, &ae) {
		switch {
		case ae.Code == http.StatusTooManyRequests && ae.RetryAfter > 0:
			d = time.Duration(ae.RetryAfter) * time.Second
		case ae.Code == http.StatusConflict:
			d = max(d, 5*time.Second)
			c.log.Error("telegram getUpdates conflict: a webhook is set or another instance is polling with this token",
				"err", err, "retry_in", d)
			return d
		case ae.Code == http.StatusUnauthorized:
			d = max(d, 30*time.Second)
			c.log.Error("telegram getUpdates unauthorized: check the bot token", "retry_in", d)
			return d
		}
	}
	c.log.Warn("telegram getUpdates failed, retrying", "err", err, "retry_in", d)
	return d
}

// getUpdates makes one long-poll request and returns the raw updates. Its errors never
// show the token.
func (c *Channel) getUpdates(ctx context.Context, offset int64) ([]json.RawMessage, error) {
	raws, err := c.requestUpdates(ctx, offset)
	return raws, c.redact(err)
}

// requestUpdates is getUpdates before redaction.
func (c *Channel) requestUpdates(ctx context.Context, offset int64) ([]json.RawMessage, error) {
	timeout := max(int((c.cfg.PollTimeout+time.Second/2)/time.Second), 1)
	body, err := json.Marshal(struct {
		Offset         int64    `json:"offset,omitempty"`
		Timeout        int      `json:"timeout"`
		AllowedUpdates []string `json:"allowed_updates"`
	}{offset, timeout, allowedUpdates})
	if err != nil {
		return nil, fmt.Errorf("encode getUpdates: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second+15*time.Second)
	defer cancel()
	var st atomic.Int32
	req, err := http.NewRequestWithContext(withStatus(ctx, &st), http.MethodPost,
		c.cfg.APIURL+"/bot"+c.cfg.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("build getUpdates request: invalid api url") // the URL holds the token: not echoed
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("getUpdates: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read getUpdates answer: %w", err)
	}
	var env struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("decode getUpdates answer (HTTP %d): %w", resp.StatusCode, err)
	}
	if !env.OK {
		code := env.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return nil, &apiError{Code: code, Description: env.Description, RetryAfter: env.Parameters.RetryAfter}
	}
	return env.Result, nil
}

// decodeBatch classifies a batch. Updates just below offset are skipped (already
// recorded); updates far below it mean Telegram re-based its ids after a quiet week, and
// are new. An update that does not decode is counted and skipped without losing the
// others. It returns the signals, the callback queries to answer, and the next offset
// (the highest new update id + 1, which after a re-base is lower than offset; or offset
// if nothing was new).
func (c *Channel) decodeBatch(raws []json.RawMessage, offset int64) ([]brain.Signal, []string, int64) {
	cl := c.classifier()
	next, newest := offset, int64(-1)
	var (
		sigs      []brain.Signal
		callbacks []string
	)
	for _, raw := range raws {
		var head struct {
			ID int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			// Without an id the update cannot be confirmed on its own; the ids around it
			// confirm it.
			c.met.updates.WithLabelValues(kindMalformed).Inc()
			c.log.Warn("telegram update without a readable update_id skipped", "err", err, "bytes", len(raw))
			continue
		}
		if isDuplicate(head.ID, offset) {
			c.met.updates.WithLabelValues(kindDuplicate).Inc()
			continue
		}
		if head.ID < offset {
			c.log.Warn("telegram update ids were re-based (no updates for a week?); following them",
				"update_id", head.ID, "offset", offset)
		}
		newest = max(newest, head.ID)
		v, err := c.decode(cl, raw)
		if err != nil {
			c.met.updates.WithLabelValues(kindMalformed).Inc()
			c.log.Warn("telegram update malformed, skipped", "update_id", head.ID, "err", err)
			continue
		}
		c.account(head.ID, v)
		if v.callbackID != "" {
			callbacks = append(callbacks, v.callbackID)
		}
		if v.ok {
			sigs = append(sigs, v.sig)
		}
	}
	if newest >= 0 {
		next = newest + 1
	}
	return sigs, callbacks, next
}

// decode unmarshals and classifies one update.
func (c *Channel) decode(cl classifier, raw []byte) (verdict, error) {
	var u models.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		return verdict{}, fmt.Errorf("decode update: %w", err)
	}
	now := c.now()
	v := cl.classify(&u, now)
	if v.ok {
		v.sig.Received = now.UTC()
	}
	return v, nil
}

// account counts and logs a verdict (never the text).
func (c *Channel) account(updateID int64, v verdict) {
	c.met.updates.WithLabelValues(v.kind).Inc()
	if v.stranger != nil {
		c.noteStranger(v.stranger)
	}
	if !v.ok {
		c.log.Debug("telegram update produces no signal", "update_id", updateID, "kind", v.kind, "reason", v.why)
	}
}

// answerCallbacks stops the buttons' spinners. Failures only cost cosmetics: logged.
func (c *Channel) answerCallbacks(ctx context.Context, ids []string) {
	for _, id := range ids {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.bot.AnswerCallbackQuery(actx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id})
		if err = c.redact(err); err != nil {
			c.log.Debug("telegram answerCallbackQuery failed", "err", err)
		}
		cancel()
	}
}
