// Package speech is how anima speaks: a reply made sayable (Markdown and links left out,
// text.go), voiced by a speech model on the endpoint's /audio/speech as Ogg/Opus (speak.go,
// read.go) under its own circuit breaker, its characters charged to the day's token budget
// and the person's share through a Meter, and its length to the person's daily speech
// (daily.go). Speech is the loop's brain.Speaker.
//
// It imports brain (the vocabulary), brain/metric, brain/ogg (a voice note's length) and
// brain/provider (an endpoint's errors and the breaker), and go-openai; never
// brain/cognition — cognition is a Meter by its methods, wired in bot — nor bot, channels
// or storage.
package speech

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/provider"
)

// Meter is the day's token accountant speech is charged to (cognition's): a token per
// character spoken, in the day's budget and the person's share.
type Meter interface {
	// TokensAllowed reports whether tokens may be spent for user now: false once the
	// day's budget, or user's share, is spent.
	TokensAllowed(user int64) bool
	// ChargeTokens counts tokens spent for user in the day's budget and their share.
	ChargeTokens(user int64, tokens int)
}

// Config is speech's part of anima's configuration. Zero values take the defaults noted
// on each field.
type Config struct {
	Model string // the speech model (required), e.g. gpt-4o-mini-tts
	Voice string // its voice (default alloy)
	// Style is the optional instructions on how the voice sounds.
	Style string
	// MaxLength is the longest reply spoken, by its estimated length (default 60 s).
	MaxLength time.Duration
	// DailyUserSpeech is how much speech one person gets a day (0: no cap).
	DailyUserSpeech time.Duration
	// Timeout bounds one speech request, the audio read with it (default 20 s; the
	// client's own timeout bounds it too): past it the reply goes as text.
	Timeout time.Duration
	// Zone is the zone of the day DailyUserSpeech counts in (default UTC): the token
	// budget's.
	Zone *time.Location
}

func (c Config) withDefaults() Config {
	if c.Voice == "" {
		c.Voice = "alloy"
	}
	if c.MaxLength <= 0 {
		c.MaxLength = time.Minute
	}
	if c.Timeout <= 0 {
		c.Timeout = 20 * time.Second
	}
	if c.Zone == nil {
		c.Zone = time.UTC
	}
	return c
}

// Options are the optional dependencies of a Speech; zero values are no-ops or defaults.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: metrics are not registered
	Clock      brain.Clock           // nil: the wall clock
	Refusals   *brain.Refusals       // counts replies refused by the daily speech (nil: not counted)
}

// Speech speaks replies (Speak) and keeps each person's speech of the day. It is safe for
// concurrent use.
type Speech struct {
	cfg     Config
	client  *openai.Client
	meter   Meter
	log     *slog.Logger
	clock   brain.Clock
	refused *brain.Refusals
	m       *metrics
	brk     *provider.Breaker
	bad     atomic.Int32 // consecutive answers saying the endpoint cannot speak
	off     atomic.Bool
	daily   *daily
}

var _ brain.Speaker = (*Speech)(nil)

// New returns a Speech that asks client (cognition.NewClient's) and charges meter.
func New(cfg Config, client *openai.Client, meter Meter, opts Options) *Speech {
	cfg = cfg.withDefaults()
	s := &Speech{cfg: cfg, client: client, meter: meter, log: opts.Logger, clock: opts.Clock, refused: opts.Refusals,
		m: newMetrics(opts.Registerer)}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// speech was cognition's until it became a package: its log lines keep their component
	s.log = s.log.With("component", "cognition")
	if s.clock == nil {
		s.clock = brain.RealClock{}
	}
	s.daily = newDaily(cfg.DailyUserSpeech, cfg.Zone, s.clock)
	s.brk = provider.NewBreaker(breakerThreshold, probeGap, func(open bool, since time.Time) {
		if open {
			s.m.breakerOpen.Set(1)
			s.log.Warn("speech circuit breaker open: replies go as text", "probe_every", probeGap)
			return
		}
		s.m.breakerOpen.Set(0)
		s.log.Info("speech circuit breaker closed: replies are spoken again", "outage", s.clock.Now().Sub(since).Round(time.Second))
	})
	return s
}
