// Package bot assembles anima from its configuration — storage, channels, the brain's
// layers, plugins and metrics — and supervises them: Run starts everything and stops it
// gracefully, persisting state, when its context ends. The configuration it is built from
// is package bot/config; settings.go turns it into each component's settings.
package bot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/channels"
	"github.com/anima-bot/anima/channels/telegram"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/mcp"
	"github.com/anima-bot/anima/storage"
)

// Version is set at build time (-ldflags "-X github.com/anima-bot/anima/bot.Version=…").
var Version = "dev"

// Options are what Run takes besides the configuration; Assemble takes them too.
type Options struct {
	Logger *slog.Logger
	// ConfigFile is the configuration file cfg was read from, as an absolute path; the
	// start line names it, so a log says which of the files the rule could pick was read
	// ("" when cfg came from no file: the simulator, tests).
	ConfigFile string
	// Console runs anima over In/Out (`anima chat`) instead of Telegram.
	Console bool
	In      io.Reader
	Out     io.Writer
	// Started, if set, is called once everything listens, with the bound addresses.
	Started func(Addrs)
	// Settled, if set, is called once the start-up is over: everything listens and every
	// MCP server's first start has ended (up or down), or settleWait after it listens.
	Settled func()
	// Plugins extend anima beyond the built-in ones (config.PluginsConfig, switched in the
	// configuration); tests use it for plugins of their own.
	Plugins []plugins.Plugin
	// Clock, if set, replaces the wall clock (tests, the simulator).
	Clock brain.Clock
	// LLM, if set, replaces the client of llm.base_url (the simulator's scripted model).
	LLM *openai.Client
	// Seed, if not 0, seeds the proactive timing's jitter (the simulator's scenario seed).
	Seed uint64
	// Registry, if set, is where Assemble's parts register their metrics (Run makes one
	// of its own).
	Registry prometheus.Registerer
	// PerChatInterval, if set, replaces the Telegram channel's spacing between two
	// messages to one chat (1s; a group's is 3×) (tests).
	PerChatInterval time.Duration
	// StopGrace, if set, replaces how long the core loop waits for runs in flight when
	// stopping before it cancels them (5s) (tests).
	StopGrace time.Duration
	// RetryBackoff, if set, replaces the model client's first retry delay (1s, doubled
	// for each further retry), which passes in real time whatever Clock is (tests).
	RetryBackoff time.Duration
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
	storeOpts := storeOptions(cfg)
	storeOpts.Logger = log // what Open refuses beside the store (a sent log it does not trust)
	store, err := storage.Open(cfg.Storage.Path, storeOpts)
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
	inbox     *loop.Inbox
	loop      *loop.Loop
	ch        channels.Channel
	tg        *telegram.Channel // nil in console mode
	sched     *schedule.Scheduler
	think     *cognition.Cognition
	usage     *usageKeeper // saves and forgets think's daily counts
	ctl       *controlServer
	compact   *storeCompactor
	ms        *metricsServer // nil without metrics.listen
	reg       *prometheus.Registry
	jobs      *plugins.Jobs
	mcp       *mcp.Manager
	clock     brain.Clock
	pendingIn []brain.Signal // signals left unprocessed by the last run
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
	g.Go(func() error { return s.usage.Run(gctx) })
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
	if opts.Settled != nil {
		g.Go(func() error { return s.started(gctx, func(Addrs) { s.settle(gctx, opts.Settled) }) })
	}
	s.log.Info("anima started", "version", Version, "config", opts.ConfigFile, "mode", modeName(cfg, opts), "allowed_users", len(cfg.Telegram.AllowedUsers))
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

// settleWait bounds how long the start-up waits for MCP servers before it counts as over.
const settleWait = 30 * time.Second

// settle calls f once every MCP server's first start has ended, or settleWait from now.
func (s *service) settle(ctx context.Context, f func()) {
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-s.mcp.Settled():
	case <-t.C:
	case <-ctx.Done():
		return
	}
	f()
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
