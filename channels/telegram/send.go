package telegram

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// MaxMessageLength is Telegram's message limit in UTF-16 code units.
const MaxMessageLength = 4096

// maxRateLimited bounds how many 429s one part may receive before Send gives up.
const maxRateLimited = 10

// sendTimeout bounds one sendMessage request.
const sendTimeout = 30 * time.Second

// errParse marks Telegram's "can't parse entities" answer.
var errParse = errors.New("telegram could not parse the message's entities")

// Send posts m to its chat: Markdown converted to Telegram HTML (unless m.Plain), split
// at MaxMessageLength, parts in order, paced (per chat and globally). ReplyTo applies to
// the first part and Buttons to the last.
//
// A part Telegram cannot parse is resent as plain text: if it is the first part the
// whole message is re-split from ToPlain(m.Text); a later part (earlier parts already
// delivered) is sent with its tags stripped. A 429 waits retry_after and resends the same
// part; 5xx and network errors are retried with exponential backoff (Options.MaxAttempts).
// Errors: one wrapping brain.ErrBlocked on 403; the Bot API error for other 4xx; the
// last error once retries are exhausted; ctx's error if it ends. Any of these after the
// first parts went out comes as a *brain.PartialSendError saying how many (unless the
// plain-text fallback re-split the message), so a resend skips them.
func (c *Channel) Send(ctx context.Context, m brain.SendMessage) error {
	if m.Chat == 0 {
		return errors.New("telegram send: no chat")
	}
	unlock, err := c.locks.lock(ctx, m.Chat)
	if err != nil {
		return fmt.Errorf("telegram send: %w", err)
	}
	defer unlock()
	c.drafts.end(m.Chat) // the reply replaces its draft; the next one gets a new draft
	if m.Voice != nil && len(m.Voice.Audio) > 0 {
		return c.sendVoice(ctx, m)
	}
	return c.sendText(ctx, m)
}

// sendText is Send for a written message; the caller holds the chat's lock.
func (c *Channel) sendText(ctx context.Context, m brain.SendMessage) error {
	htmlMode := !m.Plain
	var parts []string
	if htmlMode {
		parts = Split(ToHTML(m.Text), MaxMessageLength, true)
	} else {
		parts = Split(m.Text, MaxMessageLength, false)
	}
	if len(parts) == 0 {
		return fmt.Errorf("telegram send: %w: nothing visible to send", brain.ErrUndeliverable)
	}
	if m.SkipParts >= len(parts) {
		return nil // every part was delivered before
	}
	for i := max(m.SkipParts, 0); i < len(parts); i++ {
		err := c.sendPart(ctx, m, parts[i], htmlMode, i == 0, i == len(parts)-1)
		if errors.Is(err, errParse) && htmlMode {
			c.log.Warn("telegram could not parse HTML, resending as plain text", "part", i, "parts", len(parts))
			if i == 0 {
				htmlMode = false
				parts = Split(ToPlain(m.Text), MaxMessageLength, false)
				i = -1
				continue
			}
			err = c.sendPart(ctx, m, stripTags(parts[i]), false, false, i == len(parts)-1)
		}
		if err != nil {
			err = fmt.Errorf("telegram send part %d/%d: %w", i+1, len(parts), err)
			// Parts delivered are reported while they are the parts a resend splits m
			// into: not after the plain-text fallback re-split it.
			if i > 0 && htmlMode == !m.Plain {
				return &brain.PartialSendError{Sent: i, Err: err}
			}
			return err
		}
	}
	return nil
}

// sendPart sends one part, retrying 429 (after retry_after) and 5xx/network errors
// (with backoff). It never resends a part Telegram accepted.
func (c *Channel) sendPart(ctx context.Context, m brain.SendMessage, text string, htmlMode, first, last bool) error {
	params := &bot.SendMessageParams{
		ChatID:             m.Chat,
		Text:               text,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
	}
	if htmlMode {
		params.ParseMode = models.ParseModeHTML
	}
	if first && m.ReplyTo != 0 && m.SkipParts == 0 {
		params.ReplyParameters = &models.ReplyParameters{MessageID: m.ReplyTo, AllowSendingWithoutReply: true}
	}
	if last && len(m.Buttons) > 0 {
		params.ReplyMarkup = keyboard(m.Buttons)
	}
	return c.call(ctx, m, func(rctx context.Context) (*models.Message, error) { return c.bot.SendMessage(rctx, params) })
}

// call makes one sending request of m's (send), paced, retrying 429 (after retry_after)
// and 5xx/network errors (with backoff); a message it sends is remembered for quotes and
// reactions. It never resends what Telegram accepted. Errors: as Send's.
func (c *Channel) call(ctx context.Context, m brain.SendMessage, send func(context.Context) (*models.Message, error)) error {
	failures, limited := 0, 0
	for {
		if err := c.pace.wait(ctx, m.Chat); err != nil {
			return err
		}
		var st atomic.Int32
		rctx, cancel := context.WithTimeout(withStatus(ctx, &st), sendTimeout)
		msg, err := send(rctx)
		err = c.redact(err)
		cancel()
		c.pace.done(m.Chat, time.Now())
		if err == nil {
			if msg != nil {
				c.quotes.put(m.Chat, msg.ID, m.Text, m.Plain)
			}
			if c.sent != nil && msg != nil {
				if err := c.sent.RecordSent(m.Chat, msg.ID); err != nil {
					c.log.Warn("could not remember a sent message; reactions to it will be ignored", "err", err)
				}
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var tooMany *bot.TooManyRequestsError
		switch {
		case errors.As(err, &tooMany):
			limited++
			if limited > maxRateLimited {
				return err
			}
			wait := time.Duration(max(tooMany.RetryAfter, 1)) * time.Second
			c.log.Warn("telegram rate limited, waiting", "retry_after", wait)
			if err := c.sleep(ctx, wait); err != nil {
				return err
			}
		case errors.Is(err, bot.ErrorForbidden):
			return fmt.Errorf("%w: %w", brain.ErrBlocked, err)
		case errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "can't parse entities"):
			return fmt.Errorf("%w: %w", errParse, err)
		case errors.Is(err, bot.ErrorBadRequest):
			// The same request would be refused again ("chat not found", "message is
			// too long", …): retrying cannot help.
			return fmt.Errorf("%w: %w", brain.ErrUndeliverable, err)
		case retryable(int(st.Load())):
			failures++
			if failures >= c.attempts {
				return fmt.Errorf("gave up after %d attempts: %w", failures, err)
			}
			d := c.backoff(failures - 1)
			c.log.Warn("telegram send failed, retrying", "err", err, "attempt", failures, "retry_in", d)
			if err := c.sleep(ctx, d); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// retryable reports whether an answer status (0: no answer, a network error) is worth
// retrying.
func retryable(status int) bool {
	return status == 0 || status >= http.StatusInternalServerError
}

func keyboard(rows [][]brain.Button) models.InlineKeyboardMarkup {
	kb := make([][]models.InlineKeyboardButton, 0, len(rows))
	for _, row := range rows {
		r := make([]models.InlineKeyboardButton, 0, len(row))
		for _, b := range row {
			r = append(r, models.InlineKeyboardButton{Text: b.Text, CallbackData: b.Data})
		}
		kb = append(kb, r)
	}
	return models.InlineKeyboardMarkup{InlineKeyboard: kb}
}

// stripTags turns an HTML part into the text Telegram would have shown: tags removed,
// entities decoded. It is lenient: it is used on HTML Telegram rejected.
func stripTags(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+1:]
		j := strings.IndexByte(rest, '>')
		isTag := j > 0 && (rest[0] == '/' || rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= 'A' && rest[0] <= 'Z')
		if !isTag {
			b.WriteByte('<')
			s = rest
			continue
		}
		s = rest[j+1:]
	}
	return html.UnescapeString(b.String())
}

// Typing shows "typing…" in chat for a few seconds. It returns an error wrapping
// brain.ErrBlocked on 403, or the Bot API error.
func (c *Channel) Typing(ctx context.Context, chat int64) error {
	_, err := c.bot.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: chat, Action: models.ChatActionTyping})
	err = c.redact(err)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bot.ErrorForbidden):
		return fmt.Errorf("telegram typing: %w: %w", brain.ErrBlocked, err)
	default:
		return fmt.Errorf("telegram typing: %w", err)
	}
}
