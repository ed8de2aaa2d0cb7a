package telegram

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// DraftInterval is the least time between two draft updates in one chat.
const DraftInterval = 300 * time.Millisecond

// draftTimeout bounds one sendMessageDraft request: a draft late by seconds is useless.
const draftTimeout = 5 * time.Second

// draftLife is how long Telegram shows a draft without an update (about 30 s).
const draftLife = 30 * time.Second

// ErrDraftsRefused is returned (wrapped) by Draft when Telegram will not show drafts in a
// chat: it is not a private chat, the Bot API server refused the draft (400), or it does
// not know sendMessageDraft at all (404, an older self-hosted server).
var ErrDraftsRefused = errors.New("telegram refuses drafts here")

var _ brain.Drafter = (*Channel)(nil)

// drafts is the channel's draft state per chat: one draft id per reply being written (a
// reply's updates share it, so Telegram animates them), and when its last update went out.
// Send ends a chat's draft: the next reply gets a new id.
type drafts struct {
	mu      sync.Mutex
	chats   map[int64]*draft
	next    int64       // the last draft id issued
	unknown atomic.Bool // the Bot API server does not know sendMessageDraft
}

type draft struct {
	id   int64
	last time.Time // when the last update was sent; zero before the first
}

func newDrafts() *drafts {
	// Ids start at a random point, so a restarted anima does not reuse a draft's id.
	return &drafts{chats: map[int64]*draft{}, next: rand.Int64N(1 << 40)}
}

// take decides whether an update of chat's draft may go out at now (DraftInterval after the
// last), and books it; it returns the draft's id.
func (d *drafts) take(chat int64, now time.Time) (id int64, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.chats[chat]
	if st == nil {
		if len(d.chats) >= 256 {
			for k, v := range d.chats { // drafts Telegram has dropped by now
				if now.Sub(v.last) > draftLife {
					delete(d.chats, k)
				}
			}
		}
		d.next++
		st = &draft{id: d.next}
		d.chats[chat] = st
	}
	if !st.last.IsZero() && now.Sub(st.last) < DraftInterval {
		return st.id, false
	}
	st.last = now
	return st.id, true
}

// end forgets chat's draft: the reply it previewed is being sent.
func (d *drafts) end(chat int64) {
	d.mu.Lock()
	delete(d.chats, chat)
	d.mu.Unlock()
}

// Draft shows text (Markdown, rendered like Send renders a reply; "" shows Telegram's
// "thinking…" placeholder) as the draft of the reply being written in chat, a private chat.
// Updates closer than DraftInterval to the previous one are skipped: the caller sends the
// whole text each time, so a later update shows what a skipped one would have. A text
// longer than a message shows its last part, the one being written. Drafts are previews:
// a draft that fails (timeout, 429, 5xx) is not retried and not reported. Errors: one
// wrapping ErrDraftsRefused when drafts cannot be shown in chat; one wrapping
// brain.ErrBlocked on 403.
func (c *Channel) Draft(ctx context.Context, chat int64, text string) error {
	if chat <= 0 {
		return fmt.Errorf("telegram draft: %w: not a private chat", ErrDraftsRefused)
	}
	if c.drafts.unknown.Load() {
		return fmt.Errorf("telegram draft: %w: sendMessageDraft is not available", ErrDraftsRefused)
	}
	id, ok := c.drafts.take(chat, c.now())
	if !ok {
		return nil
	}
	body := ""
	if parts := Split(ToHTML(text), MaxMessageLength, true); len(parts) > 0 {
		body = parts[len(parts)-1]
	}
	rctx, cancel := context.WithTimeout(ctx, draftTimeout)
	defer cancel()
	_, err := c.bot.SendMessageDraft(rctx, &bot.SendMessageDraftParams{
		ChatID: chat, DraftID: strconv.FormatInt(id, 10), Text: body, ParseMode: models.ParseModeHTML,
	})
	err = c.redact(err)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bot.ErrorForbidden):
		return fmt.Errorf("telegram draft: %w: %w", brain.ErrBlocked, err)
	case errors.Is(err, bot.ErrorNotFound):
		if !c.drafts.unknown.Swap(true) {
			c.log.Warn("the Bot API server does not know sendMessageDraft; replies are not drafted", "err", err)
		}
		return fmt.Errorf("telegram draft: %w: %w", ErrDraftsRefused, err)
	case errors.Is(err, bot.ErrorBadRequest):
		return fmt.Errorf("telegram draft: %w: %w", ErrDraftsRefused, err)
	default:
		if ctx.Err() == nil {
			c.log.Debug("telegram draft failed; skipped", "err", err)
		}
		return nil
	}
}
