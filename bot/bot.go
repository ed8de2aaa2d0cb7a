// Package bot assembles anima from its configuration — storage, channels, the brain's
// layers, plugins and metrics — and supervises them: Run starts everything and stops it
// gracefully, persisting state, when its context ends. The configuration it is built from
// is package bot/config; settings.go turns it into each component's settings.
package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/channels"
	"github.com/anima-bot/anima/channels/console"
	"github.com/anima-bot/anima/channels/telegram"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/mcp"
	"github.com/anima-bot/anima/storage"
)

// Version is set at build time (-ldflags "-X github.com/anima-bot/anima/bot.Version=…").
var Version = "dev"

// Options are what Run takes besides the configuration.
type Options struct {
	Logger *slog.Logger
	// Console runs anima over In/Out (`anima chat`) instead of Telegram.
	Console bool
	In      io.Reader
	Out     io.Writer
	// Started, if set, is called once everything listens, with the bound addresses.
	Started func(Addrs)
	// Plugins extend anima beyond the built-in ones (builtinPlugins, switched in the
	// configuration); tests use it for plugins of their own.
	Plugins []plugins.Plugin
	// Clock, if set, replaces the wall clock (tests).
	Clock brain.Clock
}

// Addrs are the addresses Run bound (useful with ":0" ports).
type Addrs struct {
	Metrics string
	Webhook string
}

// Run runs anima until ctx ends (or, in console mode, input ends) and returns nil after a
// clean stop.
func Run(ctx context.Context, cfg config.Config, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if !opts.Console {
		if err := cfg.ValidateRun(); err != nil {
			return err
		}
	}
	store, err := storage.Open(cfg.Storage.Path, storage.Options{})
	if err != nil {
		return err
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}()
	s, err := assemble(cfg, opts, store, log)
	if err != nil {
		return err
	}
	return s.run(ctx, cfg, opts)
}

// service is anima assembled: every long-lived component, ready to run.
type service struct {
	log       *slog.Logger
	store     *storage.Store
	inbox     *brain.Inbox
	loop      *brain.CoreLoop
	ch        channels.Channel
	tg        *telegram.Channel // nil in console mode
	sched     *schedule.Scheduler
	think     *cognition.Cognition
	ctl       *controlServer
	compact   *storeCompactor
	ms        *metricsServer // nil without metrics.listen
	reg       *prometheus.Registry
	jobs      *plugins.Jobs
	mcp       *mcp.Manager
	clock     brain.Clock
	pendingIn []brain.Signal // signals left unprocessed by the last run
}

// assemble builds anima's components from the validated configuration, in dependency
// order: memory, schedules and tools; cognition; the proactive layers and state; the
// channel; the core loop; then the servers.
func assemble(cfg config.Config, opts Options, store *storage.Store, log *slog.Logger) (*service, error) {
	zone, err := cfg.User.Location()
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var clock brain.Clock = brain.RealClock{}
	if opts.Clock != nil {
		clock = opts.Clock
	}
	s := &service{log: log, store: store, clock: clock, reg: reg}

	// Memory, schedules and the tool registry.
	llmClient := cognition.NewClient(cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), cfg.LLM.RequestTimeout.Std())
	mem := memory.New(store, &memory.OpenAISummarizer{Client: llmClient, Model: cfg.LLM.FastModel, MaxTokens: 400},
		memory.Options{Logger: log, Clock: clock, Registerer: reg})
	refusals := brain.NewRefusals(reg)
	s.sched = schedule.New(store, schedule.Options{Clock: clock, DefaultZone: zone, Logger: log, Registerer: reg,
		Refusals: refusals, MaxPending: cfg.Limits.PendingRemindersPerChat, MaxPerRun: cfg.Limits.RemindersPerRun})
	plugs, err := NewPlugins(cfg, store, clock, log, reg, opts.Plugins...)
	if err != nil {
		return nil, err
	}
	tools, err := plugs.Tools(mem, s.sched)
	if err != nil {
		return nil, err
	}
	s.mcp = mcp.New(MCPServers(cfg.MCP), tools, mcp.Options{Logger: log, Registerer: reg})
	neurons := plugs.Neurons()
	s.think = cognition.New(CognitionConfig(cfg, zone), llmClient, mem, tools, cognition.Options{Logger: log, Registerer: reg, Clock: clock,
		Sections: plugs.Sections, Refusals: refusals})
	if err := restoreUsage(store, s.think); err != nil {
		return nil, err
	}

	// The brain's layers and state.
	pol := cfg.Proactive.Policy()
	agg, auto := ProactiveLayers(pol, reg, neurons...)
	st := brain.NewState(zone)
	if err := restoreState(store, st, agg); err != nil {
		return nil, err
	}

	// The channel submits what it records to the inbox; the loop reads the inbox and sends
	// through the channel.
	s.compact = newStoreCompactor(store, clock, cfg.Storage.CompactInterval.Std(), log)
	s.inbox = brain.NewInbox()
	if opts.Console {
		s.ch = console.New(opts.In, opts.Out, store, s.inbox, console.Options{Prompt: cfg.Persona.Name, Clock: clock})
	} else {
		if s.tg, err = telegram.New(telegramConfig(cfg.Telegram), store, s.inbox, telegram.Options{Logger: log, Registerer: reg, Sent: store}); err != nil {
			return nil, fmt.Errorf("telegram: %w", err)
		}
		s.ch = s.tg
	}
	var media brain.MediaFetcher // the channel downloads the files of user messages
	if s.tg != nil {
		media = s.tg
	}
	runsPerMinute := cfg.Limits.UserRunsPerMinute
	if runsPerMinute == 0 || opts.Console {
		runsPerMinute = -1 // no limit; the operator at the keyboard is never rate limited
	}
	jr := plugs.Journal(mem, s.sched, log)
	s.jobs = plugs.Jobs(s.think, jr, zone, nil)
	s.loop = brain.NewCoreLoop(s.inbox, s.ch, brain.LoopConfig{Tick: cfg.Brain.Tick.Std(), Apology: cfg.Persona.Apology, LogText: cfg.Log.MessageText,
		UserRunsPerMinute: runsPerMinute}, brain.LoopDeps{
		Clock: clock, State: st, Autonomic: auto, Aggregator: agg, Thinker: s.think, Media: media,
		Journal: jr,
		Commands: &commands{persona: cfg.Persona.Name, forget: pluginForgetter{forgetter: userForgetter{store: store, index: mem, sched: s.sched}, store: store, set: plugs.set},
			reminders: s.sched, format: schedule.FormatPage, policy: pol, next: agg, plugins: plugs.set,
			outage: s.think, compact: s.compact, admins: admins(s.tg), mcp: s.mcp},
		StateStore: store, Refusals: refusals, Logger: log, Registerer: reg, Drafter: drafter(cfg.Telegram, s.tg),
		DeadLetters: store,
	})

	// Work left from the last run: undelivered messages first, then unprocessed signals.
	pendingOut, err := store.PendingOutbox()
	if err != nil {
		return nil, err
	}
	s.loop.Deliver(pendingOut)
	if s.pendingIn, err = store.Pending(); err != nil {
		return nil, err
	}
	if len(pendingOut)+len(s.pendingIn) > 0 {
		log.Info("resuming work from the last run", "undelivered", len(pendingOut), "unprocessed", len(s.pendingIn))
	}

	// The servers: the owner's control socket, and metrics with health checks.
	ready := map[string]ReadyFunc{"store": func(context.Context) error { return store.Ping() }}
	if s.tg != nil {
		ready["telegram"] = s.tg.ReadyCheck
	}
	if s.ctl, err = newControlServer(store, log); err != nil {
		return nil, err
	}
	s.ctl.dead = &deadLetters{store: store, loop: s.loop, inbox: s.inbox, now: clock.Now}
	if cfg.Metrics.Listen != "" {
		if s.ms, err = newMetricsServer(cfg.Metrics.Listen, reg, ready, log); err != nil {
			_ = s.ctl.ln.Close()
			_ = os.Remove(s.ctl.path)
			return nil, err
		}
		s.ms.info = func() []string { return mcpLines(s.mcp) }
	}
	return s, nil
}

// admins is the channel that tells a group's admins: Telegram, or nobody (the console
// has no groups).
func admins(tg *telegram.Channel) adminChecker {
	if tg == nil {
		return nil
	}
	return tg
}

// run supervises the components until ctx ends or one of them fails, then waits for all
// of them to stop.
func (s *service) run(ctx context.Context, cfg config.Config, opts Options) error {
	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	g, gctx := errgroup.WithContext(runCtx)
	g.Go(func() error { return s.loop.Run(gctx) })
	g.Go(func() error {
		err := s.ch.Run(gctx)
		if errors.Is(err, io.EOF) { // console input ended
			stopAll()
			return nil
		}
		return err
	})
	g.Go(func() error {
		return s.sched.Run(gctx, time.Second, func(ctx context.Context, sigs []brain.Signal) error { return s.inbox.Submit(ctx, sigs...) })
	})
	g.Go(func() error { return s.ctl.Run(gctx) })
	g.Go(func() error { return s.compact.Run(gctx) })
	g.Go(func() error { return s.jobs.Run(gctx, s.clock.Now, cfg.Brain.Tick.Std()) })
	g.Go(func() error { return keepUsage(gctx, s.store, s.think) })
	g.Go(func() error { return s.mcp.Run(gctx) })
	if s.ms != nil {
		g.Go(func() error { return s.ms.Run(gctx) })
	}
	if len(s.pendingIn) > 0 {
		g.Go(func() error {
			if err := s.inbox.Submit(gctx, s.pendingIn...); err != nil && gctx.Err() == nil {
				return err
			}
			return nil
		})
	}
	if opts.Started != nil {
		g.Go(func() error { return s.started(gctx, opts.Started) })
	}
	s.log.Info("anima started", "version", Version, "mode", modeName(cfg, opts), "allowed_users", len(cfg.Telegram.AllowedUsers))
	err := g.Wait()
	s.log.Info("anima stopped")
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// started calls f with the bound addresses once everything listens.
func (s *service) started(ctx context.Context, f func(Addrs)) error {
	var a Addrs
	if s.ms != nil {
		a.Metrics = s.ms.Addr()
	}
	if s.tg != nil {
		select {
		case <-s.tg.Ready():
		case <-ctx.Done():
			return nil
		}
		if addr := s.tg.Addr(); addr != nil {
			a.Webhook = addr.String()
		}
	}
	f(a)
	return nil
}

func modeName(cfg config.Config, opts Options) string {
	if opts.Console {
		return "console"
	}
	return cfg.Telegram.Mode
}

// restoreState loads relationships and acks saved by the last run.
func restoreState(store *storage.Store, st *brain.State, agg brain.Aggregator) error {
	rels, err := store.Relationships()
	if err != nil {
		return err
	}
	for _, r := range rels {
		st.Upsert(r)
	}
	acks, err := store.Acks()
	if err != nil {
		return err
	}
	for _, a := range acks {
		agg.Ack(a)
	}
	return nil
}

// NewLogger builds the process logger from the log section.
func NewLogger(cfg config.LogConfig, w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	o := &slog.HandlerOptions{Level: cfg.SlogLevel()}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}
