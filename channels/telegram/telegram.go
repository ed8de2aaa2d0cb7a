// Package telegram is anima's Telegram channel. It receives updates by long polling
// (its own getUpdates loop, which confirms updates only after they are durably recorded)
// or by webhook (secret checked in constant time, 200 only after recording), turns them
// into brain signals for allowed users, and sends messages as Telegram HTML with
// splitting, plain-text fallback, retries and pacing. It uses go-telegram/bot for the
// Bot API calls; tests drive it against the fake in channels/telegram/telegramtest.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels"
	"github.com/anima-bot/anima/channels/listener"
)

var _ channels.Channel = (*Channel)(nil)

// Receive modes.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// DefaultAPIURL is Telegram's Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// DefaultWebhookPath is where the webhook is served when Webhook.Path is empty.
const DefaultWebhookPath = "/telegram/webhook"

// allowedUpdates are the update types anima asks Telegram for.
var allowedUpdates = []string{"message", "callback_query", "message_reaction", "my_chat_member"}

// Config is the channel's configuration.
type Config struct {
	Token  string
	APIURL string // default DefaultAPIURL
	Mode   string // ModePolling (default) or ModeWebhook
	// Webhook configures webhook mode.
	Webhook WebhookConfig
	// AllowedUsers are the Telegram user ids anima talks to; others are ignored unless
	// Public is set.
	AllowedUsers []int64
	Public       bool
	// Commands is the command menu set with setMyCommands at start (none: left as is).
	Commands []Command
	// PollTimeout is the long-poll timeout (default 25s, rounded to whole seconds, at
	// least 1s).
	PollTimeout time.Duration
}

// WebhookConfig configures webhook mode.
type WebhookConfig struct {
	// Listen is the address the webhook server binds, e.g. ":8443" or "127.0.0.1:0".
	Listen string
	// Path is the URL path served (default DefaultWebhookPath).
	Path string
	// PublicURL is the public base URL (scheme and host, maybe a path prefix) Telegram
	// reaches the server at; the webhook registered is PublicURL + Path. When empty,
	// setWebhook is not called (the webhook is registered by other means).
	PublicURL string
	// SecretToken is required: Telegram sends it in X-Telegram-Bot-Api-Secret-Token
	// (1–256 characters of A–Z, a–z, 0–9, _ and -).
	SecretToken string
}

// Options are the channel's optional dependencies and tuning knobs; zero values get
// defaults.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: metrics are not registered
	// HTTPClient is used for every Bot API request; its Transport is wrapped to count
	// requests. It should have no overall Timeout shorter than PollTimeout (the channel
	// sets per-request deadlines itself).
	HTTPClient *http.Client
	// PerChatInterval is the minimum time between two messages to one chat (default 1s).
	PerChatInterval time.Duration
	// GlobalRate is the maximum messages per second over all chats (default 30).
	GlobalRate float64
	// RetryBase and RetryMax bound the exponential backoff for 5xx and network errors
	// (defaults 500ms and 30s); MaxAttempts bounds the attempts of one message part
	// (default 6).
	RetryBase   time.Duration
	RetryMax    time.Duration
	MaxAttempts int
	// Sleep waits d or until ctx ends (returning ctx's error); nil uses a timer. Tests
	// replace it to observe retry waits without spending them. Pacing does not use it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for updates without a date of their own; nil uses time.Now.
	Now func() time.Time
	// Sent remembers the messages the channel sent, so that only reactions to anima's
	// own messages become signals; nil: every reaction does.
	Sent SentLog
}

// SentLog remembers which messages anima sent, per chat (bounded). Implemented by
// storage; errors are the store's.
type SentLog interface {
	RecordSent(chat int64, id int) error
	Sent(chat int64, id int) (bool, error)
}

// Channel is the Telegram channel. Create it with New.
type Channel struct {
	cfg      Config
	rec      channels.Recorder
	sink     channels.Sink
	log      *slog.Logger
	met      *metrics
	red      *redactor
	client   *http.Client
	download *http.Client // file downloads: see downloadClient
	bot      *bot.Bot
	pace     *pacer
	locks    *chatLocks
	drafts   *drafts
	sent     SentLog // may be nil
	quotes   *quotes // the latest sent messages' starts, quoted with reactions to them
	sleep    func(context.Context, time.Duration) error
	now      func() time.Time
	base     time.Duration
	maxWait  time.Duration
	attempts int

	allowed   map[int64]bool
	strangers *strangers
	me        atomic.Pointer[identity]
	running   atomic.Bool
	ready     chan struct{}
	addr      atomic.Pointer[net.Addr]
	// webhookLimits bound the webhook server (webhookLimits(); tests shorten them).
	webhookLimits listener.Limits

	recMu sync.Mutex // serialises record-and-advance in webhook mode
}

// New builds a channel. rec and sink are required. It makes no network calls.
func New(cfg Config, rec channels.Recorder, sink channels.Sink, opts Options) (*Channel, error) {
	if rec == nil || sink == nil {
		return nil, errors.New("telegram: recorder and sink are required")
	}
	cfg.normalize()
	c := &Channel{
		cfg:       cfg,
		rec:       rec,
		sink:      sink,
		log:       opts.Logger,
		met:       newMetrics(opts.Registerer),
		red:       newRedactor(cfg.Token),
		sleep:     opts.Sleep,
		now:       opts.Now,
		base:      opts.RetryBase,
		maxWait:   opts.RetryMax,
		attempts:  opts.MaxAttempts,
		allowed:   make(map[int64]bool, len(cfg.AllowedUsers)),
		strangers: newStrangers(),
		ready:     make(chan struct{}),
		locks:     newChatLocks(),
		drafts:    newDrafts(),
		sent:      opts.Sent,
		quotes:    newQuotes(),

		webhookLimits: webhookLimits(),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("component", "telegram")
	if c.sleep == nil {
		c.sleep = brain.Sleep
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.base <= 0 {
		c.base = 500 * time.Millisecond
	}
	if c.maxWait <= 0 {
		c.maxWait = 30 * time.Second
	}
	if c.attempts <= 0 {
		c.attempts = 6
	}
	perChat, rate := opts.PerChatInterval, opts.GlobalRate
	if perChat <= 0 {
		perChat = time.Second
	}
	if rate <= 0 {
		rate = 30
	}
	// 3% slack: Telegram counts arrivals, and network jitter can bring sends closer than
	// they left, so exactly 1/rate apart would sometimes look like rate+1 per second.
	c.pace = newPacer(perChat, time.Duration(1.03*float64(time.Second)/rate))
	for _, u := range cfg.AllowedUsers {
		c.allowed[u] = true
	}

	base := http.DefaultTransport
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		base = opts.HTTPClient.Transport
	}
	c.client = &http.Client{Transport: &transport{base: base, met: c.met}}
	if opts.HTTPClient != nil {
		c.client.CheckRedirect = opts.HTTPClient.CheckRedirect
		c.client.Jar = opts.HTTPClient.Jar
		c.client.Timeout = opts.HTTPClient.Timeout
	}
	c.download = downloadClient(c.client)
	b, err := bot.New(cfg.Token,
		bot.WithServerURL(cfg.APIURL),
		bot.WithHTTPClient(cfg.PollTimeout, c.client),
		bot.WithSkipGetMe(),
		bot.WithErrorsHandler(func(err error) { c.log.Debug("telegram client error", "err", c.redact(err)) }),
		bot.WithDebugHandler(func(string, ...any) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: create client: %w", err)
	}
	c.bot = b
	return c, nil
}

// normalize applies defaults to cfg. It does not judge the values: anima's configuration
// package validates what a user wrote before a channel is built from it.
func (cfg *Config) normalize() {
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	if cfg.Mode == "" {
		cfg.Mode = ModePolling
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 25 * time.Second
	}
	if cfg.Webhook.Path == "" {
		cfg.Webhook.Path = DefaultWebhookPath
	}
}

// Run learns the bot's identity (getMe), then receives updates until ctx ends. It
// returns nil when ctx ends, or an error when receiving cannot start (the stored offset
// cannot be read, the webhook address cannot be bound). Run may be called once.
func (c *Channel) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("telegram: Run called twice")
	}
	if err := c.learnIdentity(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // ctx ended before getMe succeeded
		}
		return err
	}
	menuDone := make(chan struct{})
	go func() {
		defer close(menuDone)
		c.setCommands(ctx)
	}()
	defer func() { <-menuDone }()
	if c.cfg.Mode == ModeWebhook {
		return c.runWebhook(ctx)
	}
	return c.runPolling(ctx)
}

// Command is an entry of the command menu Telegram shows users.
type Command struct {
	Name        string // without the slash
	Description string
}

// setCommands publishes the command menu, best effort: a failure only costs the menu.
func (c *Channel) setCommands(ctx context.Context) {
	if len(c.cfg.Commands) == 0 {
		return
	}
	cmds := make([]models.BotCommand, len(c.cfg.Commands))
	for i, cmd := range c.cfg.Commands {
		cmds[i] = models.BotCommand{Command: cmd.Name, Description: cmd.Description}
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := c.bot.SetMyCommands(rctx, &bot.SetMyCommandsParams{Commands: cmds})
	if err = c.redact(err); err != nil && ctx.Err() == nil {
		c.log.Warn("telegram setMyCommands failed; the command menu stays as it was", "err", err)
	}
}

// Ready is closed once Run is receiving: polling has started or the webhook server is
// listening.
func (c *Channel) Ready() <-chan struct{} { return c.ready }

// Addr is the webhook server's bound address once Ready is closed (nil in polling mode).
func (c *Channel) Addr() net.Addr {
	if a := c.addr.Load(); a != nil {
		return *a
	}
	return nil
}

// ReadyCheck calls getMe, for /readyz: it fails when Telegram is unreachable or the token
// is wrong. The error's text never shows the token.
func (c *Channel) ReadyCheck(ctx context.Context) error {
	if _, err := c.bot.GetMe(ctx); err != nil {
		return fmt.Errorf("telegram getMe: %w", c.redact(err))
	}
	return nil
}

// ErrTokenRefused is returned by Run when Telegram answers getMe with 401 Unauthorized:
// the token is wrong or revoked, and retrying cannot help.
var ErrTokenRefused = errors.New("telegram.token was refused by Telegram (401 Unauthorized): " +
	"copy the token @BotFather gave you again (or /token there for a new one)")

// learnIdentity calls getMe until it succeeds (retrying with backoff) or ctx ends. A
// token Telegram refuses ends it at once with ErrTokenRefused.
func (c *Channel) learnIdentity(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		me, err := c.bot.GetMe(ctx)
		err = c.redact(err)
		if err == nil {
			c.me.Store(&identity{id: me.ID, username: me.Username})
			c.log.Info("telegram bot identity", "bot_id", me.ID, "bot_username", me.Username)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, bot.ErrorUnauthorized) {
			return fmt.Errorf("telegram getMe: %w", ErrTokenRefused)
		}
		d := c.backoff(attempt)
		c.log.Warn("telegram getMe failed, retrying", "err", err, "retry_in", d)
		if err := c.sleep(ctx, d); err != nil {
			return err
		}
	}
}

func (c *Channel) classifier() classifier {
	cl := classifier{allowed: c.allowed, public: c.cfg.Public, quoted: c.quotes.get}
	if c.sent != nil {
		cl.own = func(chat int64, id int) bool {
			ok, err := c.sent.Sent(chat, id)
			if err != nil {
				c.log.Warn("sent messages unavailable; taking the reaction as one to anima's message", "err", err)
				return true
			}
			return ok
		}
	}
	if me := c.me.Load(); me != nil {
		cl.me = *me
	}
	return cl
}

// backoff is the wait before retry number attempt+1: RetryBase doubling up to RetryMax,
// with ±20% jitter.
func (c *Channel) backoff(attempt int) time.Duration {
	d := c.base
	for range min(attempt, 30) {
		d *= 2
		if d >= c.maxWait {
			d = c.maxWait
			break
		}
	}
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}
