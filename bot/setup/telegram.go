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

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
)

// telegram asks for the token until getMe accepts it, and returns the bot it names.
func (s *session) telegram(ctx context.Context, cfg *config.Config) (*models.User, error) {
	token := s.opt.Token
	for attempt := 1; ; attempt++ {
		if token == "" {
			var err error
			if token, err = s.askSecret("Telegram bot token (from @BotFather, /newbot)", "--token"); err != nil {
				return nil, err
			}
		}
		me, err := getMe(ctx, cfg.Telegram.APIURL, token)
		if err == nil {
			cfg.Telegram.Token = config.Secret(token)
			fmt.Fprintf(s.out, "  ✓ Telegram knows this token: it is @%s (bot id %d).\n", brain.Printable(me.Username), me.ID)
			return me, nil
		}
		if !s.retry(attempt) || ctx.Err() != nil {
			return nil, err
		}
		fmt.Fprintf(s.out, "  ✗ %s\n", err)
		token = ""
	}
}

// getMe asks the Bot API at apiURL who token belongs to. Its errors never show the token.
func getMe(ctx context.Context, apiURL, token string) (*models.User, error) {
	b, err := tgbot.New(token, tgbot.WithServerURL(apiURL), tgbot.WithSkipGetMe(),
		tgbot.WithHTTPClient(time.Minute, &http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		return nil, errors.New("telegram.token is not a bot token: copy the whole token @BotFather gave you")
	}
	me, err := b.GetMe(ctx)
	switch {
	case err == nil:
		return me, nil
	case errors.Is(err, tgbot.ErrorUnauthorized), errors.Is(err, tgbot.ErrorNotFound):
		return nil, errors.New("Telegram refused this token: copy the whole token @BotFather gave you")
	default:
		return nil, fmt.Errorf("cannot reach the Bot API at %s to check the token: %s", apiURL, strings.ReplaceAll(err.Error(), token, "[token]"))
	}
}

// owner sets telegram.allowed_users: to Options.UserID, or to whoever sends the bot the
// one-time code init prints (owner.go); anything else is ignored.
func (s *session) owner(ctx context.Context, cfg *config.Config, me *models.User) error {
	if s.opt.UserID != 0 {
		if s.opt.UserID < 0 {
			return fmt.Errorf("--user-id %d: Telegram user ids are positive", s.opt.UserID)
		}
		cfg.Telegram.AllowedUsers = []int64{s.opt.UserID}
		return nil
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	w := &waiter{apiURL: cfg.Telegram.APIURL, token: cfg.Telegram.Token.Reveal(), client: &http.Client{Timeout: 60 * time.Second},
		every: s.opt.PollEvery, sleep: s.opt.Sleep}
	ctx, cancel := context.WithTimeout(ctx, s.opt.Wait)
	defer cancel()
	if err := w.start(ctx); err != nil {
		return err
	}
	bot := brain.Printable(me.Username) // Telegram allows only letters, digits and _; a stand-in API may not
	fmt.Fprintf(s.out, "\nNow prove the bot is yours: from your Telegram account, send @%s\n\n    /start %s\n\n"+
		"or open https://t.me/%s?start=%s (it sends the code in one tap). Waiting up to %v; messages without the code are ignored.\n",
		bot, code, bot, code, s.opt.Wait)
	g := &gate{code: code, bot: me.Username, out: s.out}
	for {
		m, err := w.next(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("the code did not reach @%s within %v (%s): run anima init again, or give --user-id",
					bot, s.opt.Wait, g.ignoredCount())
			}
			return err
		}
		if u := g.take(m); u != nil {
			cfg.Telegram.AllowedUsers = []int64{u.ID}
			return nil
		}
	}
}

// waiter reads new updates without confirming any: getUpdates is never given an offset,
// so every update stays with Telegram for `anima run` (the owner's first message is
// answered once anima runs). Updates already pending when it starts are skipped by id.
type waiter struct {
	apiURL, token string
	client        *http.Client
	every         time.Duration
	sleep         func(context.Context, time.Duration) error
	seen          int64 // highest update id looked at; -1: none
	pending       bool  // updates were pending at the start: long polls would return at once
}

func (w *waiter) start(ctx context.Context) error {
	w.seen = -1
	ups, err := w.poll(ctx, 0)
	if err != nil {
		return err
	}
	for _, u := range ups {
		w.seen = max(w.seen, u.ID)
	}
	w.pending = len(ups) > 0
	return nil
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
		w.pending = w.pending || len(ups) > 0
		if w.pending {
			if err := w.sleep(ctx, w.every); err != nil {
				return nil, err
			}
		}
	}
}

// poll makes one getUpdates call without an offset, long-polling timeout seconds.
func (w *waiter) poll(ctx context.Context, timeout int) ([]models.Update, error) {
	// No allowed_updates: Telegram would keep it as the bot's setting, and drop update
	// types anima run asks for until its first poll.
	body, err := json.Marshal(map[string]any{"timeout": timeout})
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
