package setup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
			if token, err = s.askSecret("Telegram bot token (from @BotFather, /newbot)", "bot token", "ANIMA_TELEGRAM_TOKEN", "--token"); err != nil {
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
	bot := brain.Printable(me.Username) // Telegram allows only letters, digits and _; a stand-in API may not
	w := &waiter{apiURL: cfg.Telegram.APIURL, token: cfg.Telegram.Token.Reveal(), client: &http.Client{Timeout: 60 * time.Second},
		every: s.opt.PollEvery, sleep: s.opt.Sleep, out: s.out, bot: bot}
	ctx, cancel := context.WithTimeout(ctx, s.opt.Wait)
	defer cancel()
	if err := w.start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "\nNow prove the bot is yours: from your Telegram account, send @%s\n\n    /start %s\n\n"+
		"or open https://t.me/%s?start=%s (it sends the code in one tap). Waiting up to %v; messages without the code are ignored.\n",
		bot, code, bot, code, s.opt.Wait)
	g := &gate{code: code, bot: me.Username, out: s.out}
	for {
		m, err := w.next(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				why := g.ignoredCount()
				if w.confirmed > 0 {
					why += "; " + w.confirmedCount()
				}
				return fmt.Errorf("the code did not reach @%s within %v (%s): run anima init again, or give --user-id",
					bot, s.opt.Wait, why)
			}
			return err
		}
		if u := g.take(m); u != nil {
			cfg.Telegram.AllowedUsers = []int64{u.ID}
			if w.confirmed > 0 {
				fmt.Fprintf(s.out, "  (%s.)\n", w.confirmedCount())
			}
			return nil
		}
	}
}
