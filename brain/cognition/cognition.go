// Package cognition is anima's thinking layer: when the aggregation layer wakes a chat, it
// gathers what the run remembers, has brain/prompt build a bounded prompt from it, runs the
// OpenAI tool-calling loop on the fast model — escalating to the smart model on request or
// on low confidence — and turns the final answer and the tools' effects into intents. It
// also holds the tool registry and the external tools' share, the provider retry policy, a
// circuit breaker, the token budgets, streaming drafts and the media a run perceives.
package cognition

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
	"github.com/anima-bot/anima/brain/provider"
)

// ErrUnavailable is returned (wrapped) by Think when the model endpoint cannot be reached:
// the circuit breaker was open, or the run's failures opened it. It is
// brain.ErrModelUnavailable, so the core loop holds the user's messages until the model
// is back.
var ErrUnavailable = brain.ErrModelUnavailable

// Memory supplies what a prompt remembers: facts, summary, recent turns and memories
// relevant to query, fitted to about budgetTokens. An error makes the run go on without
// memory.
type Memory interface {
	Recall(ctx context.Context, chat, user int64, query string, budgetTokens int) (brain.Recall, error)
}

// Config is the cognition part of anima's configuration. Zero values take the defaults
// noted on each field.
type Config struct {
	FastModel  string // required
	SmartModel string // default: FastModel
	// RequestTimeout bounds one LLM request (default 60 s); a whole run gets three times it,
	// and its final answer is forced once less than one RequestTimeout is left.
	RequestTimeout time.Duration
	// ConfidenceThreshold: a fast answer below it is retried on the smart model (default 0.6).
	ConfidenceThreshold float64
	// DailyTokenBudget caps the tokens spent per day (DefaultZone's day) on wakes other than
	// user messages; 0 means unlimited.
	DailyTokenBudget int
	// DailyUserTokenBudget is each user's share of the day's tokens; 0 means none. Once a
	// user's runs have spent it, their wakes get no model run: a user message gets
	// BudgetNotice (once a day), other wakes an empty Outcome; nor are their files
	// downloaded or transcribed (Perceive).
	DailyUserTokenBudget int
	// BudgetNotice is the notice of a spent share (a default sentence when empty).
	BudgetNotice string
	// DailyUserAudio is how much of each user's recordings is transcribed a day (by their
	// stated duration); 0 means no cap. A recording that would go past it is not
	// downloaded, and gets a Media.Notice asking the user to type.
	DailyUserAudio time.Duration
	// ContextTokens is the prompt budget, tool definitions included (default 6000).
	ContextTokens int
	// ToolShare is the part of ContextTokens that external tools (a SetTools group's, such
	// as an MCP server's) may take together, in (0, 1] (default 0.25; the configuration allows at most 0.5); past it, whole
	// tools are left out of the run, the largest first (toolshare.go).
	ToolShare float64
	// MaxIterations is the number of model requests a run may make before a final answer is
	// forced (default 8).
	MaxIterations int
	// MaxToolCalls is the tool call budget of a run (default 12).
	MaxToolCalls int
	// ProactiveToolCalls is the tool call budget of a proactive run (default 4).
	ProactiveToolCalls int
	// MaxOutputTokens caps each response (default 800).
	MaxOutputTokens int
	// PersonaName and PersonaDescription open the system prompt.
	PersonaName        string
	PersonaDescription string
	// PersonaInterests are anima's own interests: the proactive prompt offers them as
	// something to bring up when it has nothing of the user's to say.
	PersonaInterests []string
	// DefaultZone is the users' zone unless a relationship overrides it (default UTC).
	DefaultZone *time.Location
	// QuietHours are the proactive policy's quiet hours: the brief counts the silence in
	// the person's waking time, without them (zero: none).
	QuietHours brain.QuietHours
	// TranscriptionModel transcribes voice notes, audio and video notes on the same
	// endpoint; empty switches listening off (anima says it cannot listen yet).
	TranscriptionModel string
	// MaxAudio is the longest recording transcribed (default 10 minutes).
	MaxAudio time.Duration
	// AnswerFormat asks for the final answer as a strict json_schema response_format beside
	// the tools (see format.go); false: the prompt alone asks for it.
	AnswerFormat bool
	// Vision shows photos to the model as image parts; false: anima says it cannot see
	// images yet. (The configuration's default is true.)
	Vision bool
}

func (c Config) withDefaults() Config {
	if c.SmartModel == "" {
		c.SmartModel = c.FastModel
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.ConfidenceThreshold <= 0 {
		c.ConfidenceThreshold = 0.6
	}
	if c.ContextTokens <= 0 {
		c.ContextTokens = 6000
	}
	if c.ToolShare <= 0 || c.ToolShare > 1 {
		c.ToolShare = 0.25
	}
	if c.MaxIterations <= 0 {
		c.MaxIterations = 8
	}
	if c.MaxToolCalls <= 0 {
		c.MaxToolCalls = 12
	}
	if c.ProactiveToolCalls <= 0 {
		c.ProactiveToolCalls = 4
	}
	if c.MaxOutputTokens <= 0 {
		c.MaxOutputTokens = 800
	}
	if c.PersonaName == "" {
		c.PersonaName = "Anima"
	}
	if c.DefaultZone == nil {
		c.DefaultZone = time.UTC
	}
	if c.MaxAudio <= 0 {
		c.MaxAudio = 10 * time.Minute
	}
	if c.BudgetNotice == "" {
		c.BudgetNotice = "I've thought a lot with you today — more than my daily share for one person. Let's talk again tomorrow."
	}
	return c
}

// Options are the optional dependencies and tunables of a Cognition; zero values are
// no-ops or defaults.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer // nil: metrics are not registered
	Clock      brain.Clock           // nil: the wall clock
	// Sleep waits between retries (default: a timer that honours ctx). Tests inject one that
	// returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Retries is how often a failing request is retried on the same model before the other
	// model is tried (default 2; negative: none).
	Retries int
	// Backoff is the first retry delay, doubled for each further retry (default 1 s).
	Backoff time.Duration
	// BreakerThreshold consecutive endpoint failures open the circuit breaker (default 5).
	// While it is open, runs fail fast, except that a run answering a user message may
	// send one probe request (no retries) once BreakerCooldown (default 5 s) has passed
	// since the last failed request or probe; proactive runs and dreams never probe. A
	// probe's success closes the breaker.
	BreakerThreshold int
	BreakerCooldown  time.Duration
	// Sections returns the plugins' prompt sections for a run (nil: none). It is called
	// once per run, off the loop's goroutine, and must recover its own panics.
	Sections func(w brain.Wake, now time.Time) []brain.Section
	// Refusals counts wakes refused by the per-user share (nil: not counted).
	Refusals *brain.Refusals
}

// Cognition is the brain.Thinker: the fast-then-smart tool-calling loop. It is safe for
// concurrent runs on different chats.
type Cognition struct {
	cfg     Config
	client  *openai.Client
	mem     Memory
	reg     *Registry
	log     *slog.Logger
	clock   brain.Clock
	sleep   func(ctx context.Context, d time.Duration) error
	retries int
	backoff time.Duration
	m       *metrics
	brk     *provider.Breaker
	// noStreamUntil (unix nanoseconds of the clock) keeps streaming off after the endpoint
	// refused a stream.
	noStreamUntil atomic.Int64
	// noFormat holds the models that refused response_format (model → true); see format.go.
	noFormat sync.Map
	sects    func(w brain.Wake, now time.Time) []brain.Section
	refused  *brain.Refusals
	budget   *dailyBudget // what runs spend a day (budget.go)
	prompt   *prompt.Builder
	// toolShare is the tokens external tools may take together (ToolShare of
	// ContextTokens); droppedTold holds the groups whose tools left out for it were logged.
	toolShare   int
	droppedMu   sync.Mutex
	droppedTold map[string]bool
}

var _ brain.Thinker = (*Cognition)(nil)

// New returns a Cognition that asks client (see NewClient) and offers the tools of reg (nil:
// only the core tools). A nil mem means no memory.
func New(cfg Config, client *openai.Client, mem Memory, reg *Registry, opts Options) *Cognition {
	cfg = cfg.withDefaults()
	if reg == nil {
		reg = NewRegistry()
	}
	c := &Cognition{
		cfg: cfg, client: client, mem: mem, reg: reg,
		log: opts.Logger, clock: opts.Clock, sleep: opts.Sleep,
		retries: opts.Retries, backoff: opts.Backoff, sects: opts.Sections,
		m:         newMetrics(opts.Registerer),
		refused:   opts.Refusals,
		toolShare: int(float64(cfg.ContextTokens) * cfg.ToolShare), droppedTold: map[string]bool{},
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c.log = c.log.With("component", "cognition")
	if c.clock == nil {
		c.clock = brain.RealClock{}
	}
	c.budget = newDailyBudget(cfg, c.clock)
	c.prompt = prompt.New(prompt.Config{ContextTokens: cfg.ContextTokens, PersonaName: cfg.PersonaName,
		PersonaDescription: cfg.PersonaDescription, PersonaInterests: cfg.PersonaInterests, QuietHours: cfg.QuietHours})
	if c.sleep == nil {
		c.sleep = brain.Sleep
	}
	switch {
	case c.retries == 0:
		c.retries = 2
	case c.retries < 0:
		c.retries = 0
	}
	if c.backoff <= 0 {
		c.backoff = time.Second
	}
	threshold, cooldown := opts.BreakerThreshold, opts.BreakerCooldown
	if threshold <= 0 {
		threshold = 5
	}
	if cooldown <= 0 {
		cooldown = 5 * time.Second
	}
	c.brk = provider.NewBreaker(threshold, cooldown, func(open bool, since time.Time) {
		if open {
			c.m.breakerOpen.Set(1)
			c.m.breakerSince.Set(float64(since.Unix()))
			c.log.Warn("llm circuit breaker open: the model is unreachable", "probe_every", cooldown)
			return
		}
		c.m.breakerOpen.Set(0)
		c.m.breakerSince.Set(0)
		c.log.Info("llm circuit breaker closed: the model is back", "outage", c.clock.Now().Sub(since).Round(time.Second))
	})
	return c
}

// zone is the user's zone for w: the one the core loop looked up for the wake (Wake.Loc),
// else DefaultZone.
func (c *Cognition) zone(w brain.Wake) *time.Location {
	if w.Loc != nil {
		return w.Loc
	}
	return c.cfg.DefaultZone
}

// Think runs cognition for one wake. It returns an error only when no answer could be
// produced (the endpoint failed on both models, the run's deadline passed, ctx ended);
// ErrUnavailable (wrapped) while the circuit breaker is open. After the daily token budget
// is spent, wakes other than user messages get an empty Outcome.
func (c *Cognition) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
	profile := profileOf(w)
	if out, skip := c.overBudget(w, profile); skip {
		return out, nil
	}
	mayProbe := w.Reason.Code == brain.ReasonUserMessage
	if c.brk.IsOpen(c.clock.Now(), mayProbe) {
		c.m.runs.WithLabelValues(string(profile), "unavailable").Inc()
		return brain.Outcome{}, fmt.Errorf("think chat %d: %w", w.Chat, ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*c.cfg.RequestTimeout)
	defer cancel()
	if mayProbe {
		ctx = context.WithValue(ctx, probeKey{}, true)
	}
	rc := c.remember(ctx, w)
	out, err := c.think(ctx, w, profile, rc)
	if err != nil {
		return brain.Outcome{}, c.failed(w, profile, err)
	}
	return c.settle(out, profile, rc.Sections), nil
}

// profileOf is the profile of w's run: chat unless the wake says otherwise.
func profileOf(w brain.Wake) brain.Profile {
	if w.Profile == "" {
		return brain.ProfileChat
	}
	return w.Profile
}

// failed counts a run that produced no answer and returns its error, as ErrUnavailable
// (wrapped) when the run's failures opened the breaker: the endpoint is down.
func (c *Cognition) failed(w brain.Wake, profile brain.Profile, err error) error {
	if _, open := c.brk.Outage(); open && !errors.Is(err, ErrUnavailable) {
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	label := "error"
	if errors.Is(err, ErrUnavailable) {
		label = "unavailable"
	}
	c.m.runs.WithLabelValues(string(profile), label).Inc()
	return fmt.Errorf("think chat %d: %w", w.Chat, err)
}

// probeKey marks the context of a run that may probe an open breaker (a run answering a
// user message).
type probeKey struct{}

func mayProbe(ctx context.Context) bool { ok, _ := ctx.Value(probeKey{}).(bool); return ok }

// Outage reports since when the model endpoint has been unreachable (the circuit breaker
// open); ok is false while it answers. Safe for concurrent use.
func (c *Cognition) Outage() (since time.Time, ok bool) { return c.brk.Outage() }
