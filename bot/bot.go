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
	// Plugins extend anima with tools and neurons.
	Plugins []plugins.Plugin
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
	zone, err := cfg.User.Location()
	if err != nil {
		return err
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

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	clock := brain.RealClock{}

	// Memory, schedules and the tool registry.
	llmClient := cognition.NewClient(cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), cfg.LLM.RequestTimeout.Std())
	mem := memory.New(store, &memory.OpenAISummarizer{Client: llmClient, Model: cfg.LLM.FastModel, MaxTokens: 400},
		memory.Options{Logger: log, Clock: clock, Registerer: reg})
	refusals := brain.NewRefusals(reg)
	sched := schedule.New(store, schedule.Options{Clock: clock, DefaultZone: zone, Logger: log, Registerer: reg,
		Refusals: refusals, MaxPending: cfg.Limits.PendingRemindersPerChat, MaxPerRun: cfg.Limits.RemindersPerRun})
	tools := cognition.NewRegistry()
	for _, t := range append(mem.Tools(), sched.Tools()...) {
		if err := tools.Register(t); err != nil {
			return fmt.Errorf("register tool: %w", err)
		}
	}
	neurons, err := plugins.Collect(tools, opts.Plugins...)
	if err != nil {
		return err
	}
	think := cognition.New(cognitionConfig(cfg, zone), llmClient, mem, tools, cognition.Options{Logger: log, Registerer: reg, Clock: clock, Refusals: refusals})

	if err := restoreUsage(store, think); err != nil {
		return err
	}

	// The brain's layers and state.
	pol := cfg.Proactive.Policy()
	agg, auto := proactiveLayers(pol, reg, neurons...)
	st := brain.NewState(zone)
	if err := restoreState(store, st, agg); err != nil {
		return err
	}

	// The channel submits what it records to the inbox; the loop reads the inbox and sends
	// through the channel.
	inbox := brain.NewInbox()

	// The channel.
	var ch channels.Channel
	var tg *telegram.Channel
	if opts.Console {
		ch = console.New(opts.In, opts.Out, store, inbox, console.Options{Prompt: cfg.Persona.Name, Clock: clock})
	} else {
		tg, err = telegram.New(telegramConfig(cfg.Telegram), store, inbox, telegram.Options{Logger: log, Registerer: reg, Sent: store})
		if err != nil {
			return fmt.Errorf("telegram: %w", err)
		}
		ch = tg
	}
	runsPerMinute := cfg.Limits.UserRunsPerMinute
	if runsPerMinute == 0 || opts.Console {
		runsPerMinute = -1 // no limit; the operator at the keyboard is never rate limited
	}
	loop := brain.NewCoreLoop(inbox, ch, brain.LoopConfig{Tick: cfg.Brain.Tick.Std(), Apology: cfg.Persona.Apology, LogText: cfg.Log.MessageText,
		UserRunsPerMinute: runsPerMinute}, brain.LoopDeps{
		Clock: clock, State: st, Autonomic: auto, Aggregator: agg, Thinker: think,
		Journal:    &journal{store: store, index: mem, facts: mem, sched: sched, upkeep: mem, log: log.With("component", "journal")},
		Commands:   &commands{persona: cfg.Persona.Name, forget: store, reminders: sched, format: schedule.FormatPage, policy: pol, next: agg},
		StateStore: store, Refusals: refusals, Logger: log, Registerer: reg,
	})

	// Work left from the last run: undelivered messages first, then unprocessed signals.
	pendingOut, err := store.PendingOutbox()
	if err != nil {
		return err
	}
	loop.Deliver(pendingOut)
	pendingIn, err := store.Pending()
	if err != nil {
		return err
	}
	if len(pendingOut)+len(pendingIn) > 0 {
		log.Info("resuming work from the last run", "undelivered", len(pendingOut), "unprocessed", len(pendingIn))
	}

	ready := map[string]ReadyFunc{"store": func(context.Context) error { return store.Ping() }}
	if tg != nil {
		ready["telegram"] = tg.ReadyCheck
	}
	ctl, err := newControlServer(store, log)
	if err != nil {
		return err
	}
	var ms *metricsServer
	if cfg.Metrics.Listen != "" {
		if ms, err = newMetricsServer(cfg.Metrics.Listen, reg, ready, log); err != nil {
			_ = ctl.ln.Close()
			_ = os.Remove(ctl.path)
			return err
		}
	}

	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	g, gctx := errgroup.WithContext(runCtx)
	g.Go(func() error { return loop.Run(gctx) })
	g.Go(func() error {
		err := ch.Run(gctx)
		if errors.Is(err, io.EOF) { // console input ended
			stopAll()
			return nil
		}
		return err
	})
	g.Go(func() error {
		return sched.Run(gctx, time.Second, func(ctx context.Context, sigs []brain.Signal) error { return inbox.Submit(ctx, sigs...) })
	})
	g.Go(func() error { return ctl.Run(gctx) })
	g.Go(func() error { return keepUsage(gctx, store, think) })
	if ms != nil {
		g.Go(func() error { return ms.Run(gctx) })
	}
	if len(pendingIn) > 0 {
		g.Go(func() error {
			if err := inbox.Submit(gctx, pendingIn...); err != nil && gctx.Err() == nil {
				return err
			}
			return nil
		})
	}
	if opts.Started != nil {
		a := Addrs{}
		if ms != nil {
			a.Metrics = ms.Addr()
		}
		g.Go(func() error {
			if tg != nil {
				select {
				case <-tg.Ready():
				case <-gctx.Done():
					return nil
				}
				if addr := tg.Addr(); addr != nil {
					a.Webhook = addr.String()
				}
			}
			opts.Started(a)
			return nil
		})
	}
	log.Info("anima started", "version", Version, "mode", modeName(cfg, opts), "allowed_users", len(cfg.Telegram.AllowedUsers))
	err = g.Wait()
	log.Info("anima stopped")
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
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
