package bot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/channels/console"
	"github.com/anima-bot/anima/channels/telegram"
	"github.com/anima-bot/anima/plugins/mcp"
	"github.com/anima-bot/anima/storage"
)

// assemble builds anima's components from the validated configuration, in dependency
// order: memory and schedules; the plugins and tools; cognition; the proactive layers and
// state; the channel; the core loop; the work left from the last run; then the servers.
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
	p := &parts{cfg: cfg, opts: opts, zone: zone}
	s.memory(p)
	if err := s.plugins(p); err != nil {
		return nil, err
	}
	if err := s.cognition(p); err != nil {
		return nil, err
	}
	if err := s.layers(p); err != nil {
		return nil, err
	}
	if err := s.channel(p); err != nil {
		return nil, err
	}
	s.coreLoop(p)
	if err := s.resume(); err != nil {
		return nil, err
	}
	if err := s.servers(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// parts are what one step of assemble hands on to the later ones and the running service
// does not keep.
type parts struct {
	cfg      config.Config
	opts     Options
	zone     *time.Location
	llm      *openai.Client
	mem      *memory.Memory
	refusals *brain.Refusals
	plugs    *Plugins
	tools    *cognition.Registry
	neurons  []brain.Neuron
	pol      brain.ProactivePolicy
	agg      *aggregation.Aggregator
	auto     *autonomic.Layer
	state    *brain.State
}

// memory builds the memory and the schedules.
func (s *service) memory(p *parts) {
	cfg, log, reg := p.cfg, s.log, s.reg
	p.llm = cognition.NewClient(cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), cfg.LLM.RequestTimeout.Std())
	p.mem = memory.New(s.store, &memory.OpenAISummarizer{Client: p.llm, Model: cfg.LLM.FastModel, MaxTokens: 400},
		memory.Options{Logger: log, Clock: s.clock, Registerer: reg})
	p.refusals = brain.NewRefusals(reg)
	s.sched = schedule.New(s.store, schedule.Options{Clock: s.clock, DefaultZone: p.zone, Logger: log, Registerer: reg,
		Refusals: p.refusals, MaxPending: cfg.Limits.PendingRemindersPerChat, MaxPerRun: cfg.Limits.RemindersPerRun})
}

// plugins loads the plugins and builds the tool registry, the MCP servers' tools
// included.
func (s *service) plugins(p *parts) error {
	plugs, err := NewPlugins(p.cfg, s.store, s.clock, s.log, s.reg, p.opts.Plugins...)
	if err != nil {
		return err
	}
	tools, err := plugs.Tools(p.mem, s.sched)
	if err != nil {
		return err
	}
	s.mcp = mcp.New(p.cfg.MCP.Enabled(), tools, mcp.Options{Logger: s.log, Registerer: s.reg})
	p.plugs, p.tools, p.neurons = plugs, tools, plugs.Neurons()
	return nil
}

// cognition builds the model's side and restores its token usage.
func (s *service) cognition(p *parts) error {
	s.think = cognition.New(CognitionConfig(p.cfg, p.zone), p.llm, p.mem, p.tools, cognition.Options{Logger: s.log, Registerer: s.reg, Clock: s.clock,
		Sections: p.plugs.Sections, Refusals: p.refusals})
	return restoreUsage(s.store, s.think)
}

// layers builds the brain's proactive layers and its state, restored from the store.
func (s *service) layers(p *parts) error {
	p.pol = p.cfg.Proactive.Policy()
	p.agg, p.auto = ProactiveLayers(p.pol, s.reg, p.neurons...)
	p.state = brain.NewState(p.zone)
	return restoreState(s.store, p.state, p.agg)
}

// channel builds the channel: it submits what it records to the inbox; the loop reads
// the inbox and sends through the channel.
func (s *service) channel(p *parts) error {
	cfg, opts, store := p.cfg, p.opts, s.store
	s.compact = newStoreCompactor(store, s.clock, cfg.Storage.CompactInterval.Std(), s.log)
	s.inbox = loop.NewInbox()
	if opts.Console {
		s.ch = console.New(opts.In, opts.Out, store, s.inbox, console.Options{Prompt: cfg.Persona.Name, Clock: s.clock})
		return nil
	}
	tg, err := telegram.New(telegramConfig(cfg.Telegram), store, s.inbox, telegram.Options{Logger: s.log, Registerer: s.reg, Sent: store,
		PerChatInterval: opts.PerChatInterval})
	if err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	s.tg, s.ch = tg, tg
	return nil
}

// coreLoop builds the plugins' jobs and the core loop with its commands.
func (s *service) coreLoop(p *parts) {
	cfg, store, log, plugs := p.cfg, s.store, s.log, p.plugs
	var media brain.MediaFetcher // the channel downloads the files of user messages
	if s.tg != nil {
		media = s.tg
	}
	runsPerMinute := cfg.Limits.UserRunsPerMinute
	if runsPerMinute == 0 || p.opts.Console {
		runsPerMinute = -1 // no limit; the operator at the keyboard is never rate limited
	}
	jr := plugs.Journal(p.mem, s.sched, log)
	s.jobs = plugs.Jobs(s.think, jr, p.zone, nil)
	s.loop = loop.New(s.inbox, s.ch, loop.Config{Tick: cfg.Brain.Tick.Std(), Apology: cfg.Persona.Apology, LogText: cfg.Log.MessageText,
		UserRunsPerMinute: runsPerMinute}, loop.Deps{
		Clock: s.clock, State: p.state, Autonomic: p.auto, Aggregator: p.agg, Thinker: s.think, Media: media,
		Journal: jr,
		Commands: &commands{persona: cfg.Persona.Name, forget: pluginForgetter{forgetter: userForgetter{store: store, index: p.mem, sched: s.sched}, set: plugs.set},
			reminders: s.sched, format: schedule.FormatPage, policy: p.pol, next: p.agg, plugins: plugs.set,
			outage: s.think, compact: s.compact, admins: admins(s.tg), mcp: s.mcp},
		StateStore: store, Refusals: p.refusals, Logger: log, Registerer: s.reg, Drafter: drafter(cfg.Telegram, s.tg),
		DeadLetters: store,
	})
}

// resume takes up the work left from the last run: undelivered messages first, then
// unprocessed signals.
func (s *service) resume() error {
	pendingOut, err := s.store.PendingOutbox()
	if err != nil {
		return err
	}
	s.loop.Deliver(pendingOut)
	if s.pendingIn, err = s.store.Pending(); err != nil {
		return err
	}
	if len(pendingOut)+len(s.pendingIn) > 0 {
		s.log.Info("resuming work from the last run", "undelivered", len(pendingOut), "unprocessed", len(s.pendingIn))
	}
	return nil
}

// servers builds the servers: the owner's control socket, and metrics with health
// checks.
func (s *service) servers(cfg config.Config) error {
	store := s.store
	ready := map[string]ReadyFunc{"store": func(context.Context) error { return store.Ping() }}
	if s.tg != nil {
		ready["telegram"] = s.tg.ReadyCheck
	}
	var err error
	if s.ctl, err = newControlServer(store, s.log); err != nil {
		return err
	}
	s.ctl.dead = &deadLetters{store: store, loop: s.loop, inbox: s.inbox, now: s.clock.Now}
	if cfg.Metrics.Listen != "" {
		if s.ms, err = newMetricsServer(cfg.Metrics.Listen, s.reg, ready, s.log); err != nil {
			_ = s.ctl.ln.Close()
			_ = os.Remove(s.ctl.path)
			return err
		}
		s.ms.info = func() []string { return mcpLines(s.mcp) }
	}
	return nil
}

// admins is the channel that tells a group's admins: Telegram, or nobody (the console
// has no groups).
func admins(tg *telegram.Channel) adminChecker {
	if tg == nil {
		return nil
	}
	return tg
}
