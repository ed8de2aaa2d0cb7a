package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// pollLimit is the most updates one getUpdates call returns (the Bot API's limit and
// default): a queue of pollLimit or more unconfirmed updates hides everything after its
// oldest pollLimit from a poller that confirms nothing.
const pollLimit = 100

// waiter reads new updates confirming as few as it can, so that they stay with Telegram
// for `anima run` (the owner's first message is answered once anima runs). Updates
// already pending when it starts are skipped by id.
//
// Telegram hands out only the oldest pollLimit pending updates, and reading past them
// means confirming them (getUpdates with an offset above their ids). So the one case in
// which waiter confirms is a full page it has looked at all of: at the start (updates
// sent before the code was printed, which cannot carry it), and during the wait (those,
// and messages without the code). Otherwise anyone who sends the bot pollLimit
// messages, or leaves them unread, would hide the owner's code until Telegram drops
// them a day later. Each time, it says so on out.
type waiter struct {
	apiURL, token string
	client        *http.Client
	every         time.Duration
	sleep         func(context.Context, time.Duration) error
	out           io.Writer
	bot           string // the bot's @name, printable
	seen          int64  // highest update id looked at; -1: none
	offset        int64  // getUpdates offset: the updates below it are confirmed; 0: none
	confirmed     int    // updates confirmed, all looked at
	toldFull      bool   // out was told the queue filled up during the wait
	pending       bool   // updates are pending: long polls would return at once
}

// start looks at the updates already pending, confirming full pages of them until the
// queue has room for the code; it says how many it confirmed.
func (w *waiter) start(ctx context.Context) error {
	w.seen = -1
	for {
		ups, err := w.poll(ctx, 0)
		if err != nil {
			return err
		}
		for _, u := range ups {
			w.seen = max(w.seen, u.ID)
		}
		if len(ups) < pollLimit {
			w.pending = len(ups) > 0
			break
		}
		w.confirm(len(ups))
	}
	if w.confirmed > 0 {
		fmt.Fprintf(w.out, "\nTelegram held %d or more unread updates for @%s, and hands out only the oldest %d until they are confirmed: "+
			"init confirmed %d, all sent before it printed your code, so that the code can reach it. `anima run` will not see those.\n",
			w.confirmed, w.bot, pollLimit, w.confirmed)
	}
	return nil
}

// confirm moves the offset past every update looked at: the next poll confirms the n
// updates of the full page just read.
func (w *waiter) confirm(n int) {
	w.offset = w.seen + 1
	w.confirmed += n
}

// next returns the next new message from a person.
func (w *waiter) next(ctx context.Context) (*models.Message, error) {
	for {
		timeout := 25
		if w.pending {
			timeout = 0
		}
		ups, err := w.poll(ctx, timeout)
		if err != nil {
			return nil, err
		}
		for _, u := range ups {
			if u.ID <= w.seen {
				continue
			}
			w.seen = u.ID
			if m := u.Message; m != nil && m.From != nil && !m.From.IsBot {
				return m, nil
			}
		}
		if len(ups) >= pollLimit { // a full page, all of it looked at: read past it
			if !w.toldFull {
				w.toldFull = true
				fmt.Fprintf(w.out, "  Telegram's queue for @%s is full (%d unread updates, none with the code): init confirms the updates it has "+
					"looked at, so that the code can still reach it. `anima run` will not see them.\n", w.bot, pollLimit)
			}
			w.confirm(len(ups))
			w.pending = false // what is left is what the next poll returns: it waits only if nothing is
			continue
		}
		w.pending = w.pending || len(ups) > 0
		if w.pending {
			if err := w.sleep(ctx, w.every); err != nil {
				return nil, err
			}
		}
	}
}

// poll makes one getUpdates call from w.offset (none while it is 0), long-polling
// timeout seconds.
func (w *waiter) poll(ctx context.Context, timeout int) ([]models.Update, error) {
	// No allowed_updates: Telegram would keep it as the bot's setting, and drop update
	// types anima run asks for until its first poll.
	params := map[string]any{"timeout": timeout, "limit": pollLimit}
	if w.offset != 0 {
		params["offset"] = w.offset
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode getUpdates: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.apiURL+"/bot"+w.token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("build getUpdates request: invalid telegram.api_url")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("getUpdates: %s", strings.ReplaceAll(err.Error(), w.token, "[token]"))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("read getUpdates answer: %w", err)
	}
	var env struct {
		OK          bool            `json:"ok"`
		Result      []models.Update `json:"result"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("decode getUpdates answer (HTTP %d): %w", resp.StatusCode, err)
	}
	switch {
	case env.OK:
		return env.Result, nil
	case env.ErrorCode == http.StatusConflict:
		return nil, errors.New("Telegram will not hand out updates while this bot has a webhook " +
			"(or another process is polling it): give --user-id instead of waiting for a message")
	default:
		return nil, fmt.Errorf("getUpdates: %s (%s)", brain.Printable(env.Description), strconv.Itoa(env.ErrorCode))
	}
}

// confirmedCount says how many updates were confirmed to read past a full queue.
func (w *waiter) confirmedCount() string {
	if w.confirmed == 1 {
		return "1 update was confirmed to read past a full queue; anima run will not see it"
	}
	return fmt.Sprintf("%d updates were confirmed to read past a full queue; anima run will not see them", w.confirmed)
}
