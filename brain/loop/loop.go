package loop

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Config tunes the Loop.
type Config struct {
	Tick          time.Duration // default 1s
	MaxConcurrent int           // cognition runs at once (default 8)
	Apology       string        // sent when cognition fails on a user message
	// OutageNotice is sent, once per outage, to a chat whose messages wait for the model
	// to come back.
	OutageNotice string
	// HoldRetry is how often, while the model is unreachable, the longest-held chat asks
	// again (a probe) in the first minute of the hold (default 5s, the Thinker's probe
	// gap); after it the interval doubles per probe up to HoldRetryMax (default 60s).
	// MaxHold is how long messages wait before they are dropped (default 24h).
	HoldRetry    time.Duration
	HoldRetryMax time.Duration
	MaxHold      time.Duration
	// StopGrace bounds how long Run waits for runs in flight when stopping (default 5s).
	StopGrace time.Duration
	// DuplicateWindow is how many recent sent messages a proactive one is compared with.
	DuplicateWindow int
	// LogText logs message texts at debug level (off by default: texts are private).
	LogText bool
	// LogReplies logs one INFO line per turn a model run sends (see logSent; never the text).
	LogReplies bool
	// TypingDelay is how long a run may take before the typing indicator (and the draft of
	// a streamed answer) shows
	// (default 250ms; a negative value shows it at once).
	TypingDelay time.Duration
	// UserRunsPerMinute caps the model runs a user's messages cause, and the commands
	// they send, in any minute (default 20; negative: no cap). Wakes beyond it wait, folded into the next
	// allowed run, and the user gets RateNotice once per limited period.
	UserRunsPerMinute int
	// RateNotice is the rate limit's notice (a default sentence when empty).
	RateNotice string
	// Voice is when replies are spoken (voice.reply), with Deps.Speaker.
	Voice brain.VoiceMode
}

// Deps are the Loop's collaborators besides its inbox and sender. Nil optional ones
// become no-ops.
type Deps struct {
	Clock      brain.Clock
	State      *brain.State
	Autonomic  brain.Autonomic // optional
	Aggregator brain.Aggregator
	Thinker    brain.Thinker
	Media      brain.MediaFetcher // optional: downloads the files of user messages for a Perceiver
	Journal    Journal
	Commands   CommandHandler // optional
	StateStore StateStore     // optional
	// Drafter shows answers to a user in a private chat as they are written (optional).
	Drafter brain.Drafter
	// Speaker voices replies to be spoken (optional: without it, every reply is text).
	Speaker brain.Speaker
	// Tools, when set, holds a run until the tool servers' first listings are in (bounded
	// by their timeouts), so a run started just after anima did offers their tools.
	Tools    ToolWaiter
	Refusals *brain.Refusals // optional: counts what the limits refused or throttled
	// DeadLetters keeps work that failed for good (optional: counted only).
	DeadLetters brain.DeadLetters
	Logger      *slog.Logger
	Registerer  prometheus.Registerer
}

// ToolWaiter is what a run waits on before it thinks: the tools from outside
// (mcp.Manager.AwaitTools). AwaitTools returns when they are in, its bound passed, or
// ctx ended.
type ToolWaiter interface {
	AwaitTools(ctx context.Context)
}

// Loop runs the brain: it takes signals from its inbox, runs the autonomic and
// aggregation layers (its Stepper) on every tick and on every arrival, wakes cognition per
// chat (in order, bounded concurrency, off the tick), commits each turn, delivers its
// messages and applies the intents that come back (the package comment lists its files
// in the order a signal meets them).
type Loop struct {
	cfg  Config
	deps Deps
	send Sender
	log  *slog.Logger
	m    *loopMetrics

	in        *Inbox
	done      chan result
	redeliver chan []brain.Outgoing // Redeliver's entries
	applied   chan []brain.Intent   // Apply's intents
	stopped   chan struct{}         // closed when Run stops: Apply takes no more

	// owned by the Run goroutine
	st      *brain.State
	stepper *Stepper
	changed *changes
	chats   map[int64]*chatQueue
	// waitingSlot are the chats whose next job waits for a free slot, in the order they
	// started waiting.
	waitingSlot []int64
	running     int
	retries     retries
	held        heldChats // the chats waiting out a model outage (outage.go)
	wg          sync.WaitGroup
	stopping    bool // set by stop: no new job starts
	persist     chan persistJob
	// the per-user rate limit (ratelimit.go)
	limit       *rateLimit
	throttled   map[int64]time.Time // chat → when its rate-limited (throttled) wake may start
	noticed     map[int64]time.Time // user → end of the period their notice covers
	limitPruned time.Time
}

// New builds a loop that takes signals from in and delivers messages through
// send; call Run to start it. Both are required: a loop without them cannot run.
func New(in *Inbox, send Sender, cfg Config, deps Deps) *Loop {
	if in == nil || send == nil {
		panic("brain: New needs an inbox and a sender")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 8
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 5 * time.Second
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = 20
	}
	if cfg.TypingDelay == 0 {
		cfg.TypingDelay = 250 * time.Millisecond
	} else if cfg.TypingDelay < 0 {
		cfg.TypingDelay = 0
	}
	if cfg.UserRunsPerMinute == 0 {
		cfg.UserRunsPerMinute = 20
	}
	if cfg.RateNotice == "" {
		cfg.RateNotice = "You're writing faster than I can think — I'll answer everything you sent in a moment."
	}
	if cfg.Apology == "" {
		cfg.Apology = "Sorry — my thoughts got tangled just now. Could you say that again in a minute?"
	}
	if cfg.OutageNotice == "" {
		cfg.OutageNotice = "I can't reach my thoughts right now — I have your message and will answer as soon as I can."
	}
	if cfg.HoldRetry <= 0 {
		cfg.HoldRetry = 5 * time.Second
	}
	if cfg.HoldRetryMax < cfg.HoldRetry {
		cfg.HoldRetryMax = max(60*time.Second, cfg.HoldRetry)
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = 24 * time.Hour
	}
	if deps.Clock == nil {
		deps.Clock = brain.RealClock{}
	}
	if deps.State == nil {
		deps.State = brain.NewState(nil)
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stepper := NewStepper(StepperDeps{State: deps.State, Autonomic: deps.Autonomic, Aggregator: deps.Aggregator,
		LogText: cfg.LogText, Logger: log, Registerer: deps.Registerer})
	l := &Loop{
		cfg:  cfg,
		deps: deps,
		send: send,
		log:  log.With("component", "brain"),
		m:    newLoopMetrics(deps.Registerer),
		in:   in,
		// Room for every run in flight: a run never blocks reporting back, even one that
		// ends while stop waits only for the WaitGroup, or after Run returned.
		done:      make(chan result, max(64, cfg.MaxConcurrent)),
		redeliver: make(chan []brain.Outgoing, 16),
		applied:   make(chan []brain.Intent, 16),
		stopped:   make(chan struct{}),
		st:        deps.State,
		stepper:   stepper,
		changed:   stepper.changed,
		chats:     map[int64]*chatQueue{},
		limit:     newRateLimit(cfg.UserRunsPerMinute, time.Minute),
		throttled: map[int64]time.Time{},
		noticed:   map[int64]time.Time{},
		held:      newHeldChats(deps.Registerer),
	}
	stepper.busy = l.busy
	return l
}

// busy reports whether chat has a job running or queued.
func (l *Loop) busy(chat int64) bool {
	q := l.chats[chat]
	return q != nil && (q.running || len(q.jobs) > 0)
}

// Deliver queues outbox entries left from an earlier run (in order, per chat) ahead of
// new work. Call before Run.
func (l *Loop) Deliver(entries []brain.Outgoing) {
	for _, e := range entries {
		q := l.queue(e.Msg.Chat)
		if n := len(q.jobs); n > 0 && q.jobs[n-1].kind == jobDeliver {
			q.jobs[n-1].deliver = append(q.jobs[n-1].deliver, e)
			continue
		}
		q.jobs = append(q.jobs, job{kind: jobDeliver, deliver: []brain.Outgoing{e}})
	}
	l.m.outboxPending.Add(float64(len(entries)))
}

// Run runs the loop until ctx ends, then waits (bounded) for runs in flight and persists
// state. It returns nil on a clean stop.
func (l *Loop) Run(ctx context.Context) error {
	// Runs get a context of their own: a stop lets them finish (StopGrace) before it
	// cancels them.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	ticker := time.NewTicker(l.cfg.Tick)
	defer ticker.Stop()
	flushEvery := 0
	l.persist = make(chan persistJob)
	persisted := make(chan struct{})
	go func() {
		defer close(persisted)
		l.persister(l.persist)
	}()
	defer func() {
		close(l.persist)
		<-persisted
	}()

	for chat := range l.chats {
		l.startNext(work, chat)
	}
	for {
		select {
		case <-ctx.Done():
			return l.stop(work, cancelWork)
		case sigs := <-l.in.c:
			l.step(work, l.deps.Clock.Now(), sigs, false)
		case r := <-l.done:
			l.finish(work, r)
		case intents := <-l.applied:
			l.applyOutside(intents)
		case entries := <-l.redeliver:
			l.Deliver(entries)
			l.startNext(work, entries[0].Msg.Chat)
		case <-ticker.C:
			l.step(work, l.deps.Clock.Now(), nil, true)
			flushEvery++
			if flushEvery >= 5 {
				flushEvery = 0
				l.flush(false)
			}
		}
	}
}

// step runs the layers over sigs (and, on a tick, queues due retries) and dispatches the
// wakes and commands.
func (l *Loop) step(ctx context.Context, now time.Time, sigs []brain.Signal, tick bool) {
	if tick {
		l.m.ticks.Inc()
		l.retryDue(ctx, now)
		l.releaseThrottled(ctx, now)
		l.holdTick(ctx, now)
	}
	for _, w := range l.stepper.Step(now, sigs) {
		l.dispatch(ctx, job{kind: jobWake, wake: w})
	}
	l.dropSuperseded(ctx, now)
	for _, s := range sigs {
		if s.Type == brain.SignalCommand {
			l.dispatch(ctx, job{kind: jobCommand, command: s})
		}
	}
}

func (l *Loop) stop(ctx context.Context, cancelWork context.CancelFunc) error {
	// Jobs still queued stay undone (their signals in the inbox, their entries in the
	// outbox) for the next start; starting one now would outlive Run and race l.wg.Wait.
	l.stopping = true
	waited := make(chan struct{})
	go func() { l.wg.Wait(); close(waited) }()
	timer := time.NewTimer(l.cfg.StopGrace)
	defer timer.Stop()
	for {
		select {
		case r := <-l.done:
			l.finish(ctx, r)
			continue
		case <-waited:
		case <-timer.C:
			cancelWork()
			select {
			case <-waited:
			case <-time.After(l.cfg.StopGrace):
				l.log.Error("runs still in flight after the stop grace and cancellation; stopping without them")
			}
		}
		break
	}
	// What Apply handed over is applied and persisted with the rest.
	close(l.stopped)
	for len(l.applied) > 0 {
		l.applyOutside(<-l.applied)
	}
	// Drain results of runs that ended during the wait.
	for {
		select {
		case r := <-l.done:
			l.finish(ctx, r)
			continue
		default:
		}
		break
	}
	l.flush(true)
	return nil
}
