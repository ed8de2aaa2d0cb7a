package bot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/brain/speech"
	"github.com/anima-bot/anima/channels/console"
	"github.com/anima-bot/anima/channels/telegram"
	"github.com/anima-bot/anima/plugins/mcp"
	"github.com/anima-bot/anima/storage"
)

// assemble builds anima's components from the validated configuration, in dependency
// order: the parts Assemble builds (memory and schedules; the plugins and tools;
// cognition; the proactive layers and state); the channel; the core loop; the work left
// from the last run; then the servers.
func assemble(cfg config.Config, opts Options, store *storage.Store, log *slog.Logger) (*service, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts.Logger, opts.Registry = log, reg
	p, err := Assemble(cfg, store, opts)
	if err != nil {
		return nil, err
	}
	s := &service{log: log, store: store, clock: p.Clock, reg: reg, sched: p.Schedule, think: p.Cognition, mcp: p.MCP,
		usage: newUsageKeeper(store, p.Cognition, p.speechUsage())}
	if err := s.channel(cfg, opts); err != nil {
		return nil, err
	}
	s.coreLoop(cfg, opts, p)
	if err := s.resume(); err != nil {
		return nil, err
	}
	if err := s.servers(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// Parts are the components of anima that think, remember and decide, built from the
// configuration by Assemble: the same for `anima run`, `anima chat` and the simulator,
// which then add a channel and a core loop (the service) or drive them on a clock of
// their own (bot/sim).
type Parts struct {
	Clock      brain.Clock
	Zone       *time.Location // the configured user.timezone
	Memory     *memory.Memory
	Schedule   *schedule.Scheduler
	Refusals   *brain.Refusals
	Plugins    *Plugins
	Tools      *cognition.Registry
	MCP        *mcp.Manager // the MCP servers' tools; not running until its Run
	Cognition  *cognition.Cognition
	Speech     *speech.Speech // nil without llm.speech_model
	Journal    TurnJournal    // commits turns: inbox, history, index, outbox, facts, schedules, plugins
	Policy     brain.ProactivePolicy
	Aggregator *aggregation.Aggregator
	Autonomic  *autonomic.Layer
	State      *brain.State // restored from the store, with the aggregator's acks

	log *slog.Logger
	reg prometheus.Registerer
}

// Assemble builds the Parts from the validated configuration over store, in dependency
// order: memory and the schedules; the plugins and the tool registry; cognition, its
// token usage restored; the proactive layers and the state, restored from the store.
// opts.Clock, opts.LLM, opts.Seed, opts.Logger, opts.Registry and opts.Plugins replace
// what they name; the rest of opts is the service's.
func Assemble(cfg config.Config, store *storage.Store, opts Options) (*Parts, error) {
	zone, err := cfg.User.Location()
	if err != nil {
		return nil, err
	}
	p := &Parts{Clock: opts.Clock, Zone: zone}
	if p.Clock == nil {
		p.Clock = brain.RealClock{}
	}
	b := builder{cfg: cfg, opts: opts, store: store, log: opts.Logger, reg: opts.Registry, p: p}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.reg == nil {
		b.reg = prometheus.NewRegistry()
	}
	p.log, p.reg = b.log, b.reg
	if err := b.memory(); err != nil {
		return nil, err
	}
	if err := b.plugins(); err != nil {
		return nil, err
	}
	if err := b.cognition(); err != nil {
		return nil, err
	}
	if err := b.layers(); err != nil {
		return nil, err
	}
	return p, nil
}

// builder is what Assemble's steps share.
type builder struct {
	cfg   config.Config
	opts  Options
	store *storage.Store
	log   *slog.Logger
	reg   prometheus.Registerer
	p     *Parts
}

// memory builds the memory (which first upgrades an old store's search index) and the
// schedules.
func (b *builder) memory() error {
	cfg, p, log, reg := b.cfg, b.p, b.log, b.reg
	llm := b.opts.LLM
	if llm == nil {
		llm = cognition.NewClient(cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), cfg.LLM.RequestTimeout.Std())
	}
	b.opts.LLM = llm
	var emb memory.Embedder // none: recall is lexical alone
	if m := cfg.LLM.EmbeddingModel; m != "" {
		emb = memory.OpenAIEmbedder{Client: llm, Model: m, Dimensions: memory.EmbedderDimensions(m)}
	}
	mem, err := memory.New(b.store, &memory.OpenAISummarizer{Client: llm, Model: cfg.LLM.FastModel, MaxTokens: 400},
		memory.Options{Logger: log, Clock: p.Clock, Registerer: reg, Language: cfg.User.Language, Name: cfg.Persona.Name,
			Embedder: emb})
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	p.Memory = mem
	p.Refusals = brain.NewRefusals(reg)
	p.Schedule = schedule.New(b.store, schedule.Options{Clock: p.Clock, DefaultZone: p.Zone, Logger: log, Registerer: reg,
		Refusals: p.Refusals, MaxPending: cfg.Limits.PendingRemindersPerChat, MaxPerRun: cfg.Limits.RemindersPerRun})
	return nil
}

// plugins loads the plugins and builds the tool registry, the MCP servers' tools
// included, and the journal.
func (b *builder) plugins() error {
	p := b.p
	plugs, err := NewPlugins(b.cfg, b.store, p.Clock, b.log, b.reg, b.opts.Plugins...)
	if err != nil {
		return err
	}
	tools, err := plugs.Tools(p.Memory, p.Schedule)
	if err != nil {
		return err
	}
	// The record of the stdio servers' process groups is named after the store, as the
	// control socket is: `anima chat` keeps its own store in the same folder, and the
	// store's lock makes one process its only reader and writer.
	p.MCP = mcp.New(b.cfg.MCP.Enabled(), tools, mcp.Options{Logger: b.log, Registerer: b.reg, Pids: b.store.Path() + ".mcp-pids"})
	p.Plugins, p.Tools = plugs, tools
	p.Journal = plugs.Journal(p.Memory, p.Schedule, b.log)
	return nil
}

// cognition builds the model's side and speech (with a speech model), and restores their
// usage of the day.
func (b *builder) cognition() error {
	p := b.p
	p.Cognition = cognition.New(CognitionConfig(b.cfg, p.Zone), b.opts.LLM, p.Memory, p.Tools, cognition.Options{Logger: b.log, Registerer: b.reg, Clock: p.Clock,
		Backoff: b.opts.RetryBackoff, Sections: p.Plugins.Sections, Refusals: p.Refusals})
	p.Memory.SetMeter(embeddingMeter{p.Cognition}) // embeddings count in the day's budget
	// Speech is charged to the day's budget and the person's share: cognition is its Meter.
	if b.cfg.LLM.SpeechModel != "" {
		p.Speech = speech.New(SpeechConfig(b.cfg, p.Zone), b.opts.LLM, p.Cognition,
			speech.Options{Logger: b.log, Registerer: b.reg, Clock: p.Clock, Refusals: p.Refusals})
	}
	return restoreUsage(b.store, p.Cognition, p.speechUsage())
}

var _ speech.Meter = (*cognition.Cognition)(nil)

// speechUsage is the speech made per person today, or nil without a speech model.
func (p *Parts) speechUsage() speechUsage {
	if p.Speech == nil {
		return nil
	}
	return p.Speech
}

// embeddingMeter is memory's Meter over cognition's accountant: what embeddings cost
// counts in the day's token budget and the person's share.
type embeddingMeter struct{ c *cognition.Cognition }

func (m embeddingMeter) Allowed(user int64) bool       { return m.c.TokensAllowed(user) }
func (m embeddingMeter) Charge(user int64, tokens int) { m.c.ChargeTokens(user, tokens) }

// layers builds the brain's proactive layers and its state, restored from the store.
func (b *builder) layers() error {
	p := b.p
	p.Policy = b.cfg.Proactive.Policy()
	if b.opts.Seed != 0 {
		p.Policy.Seed = b.opts.Seed
	}
	p.Aggregator, p.Autonomic = ProactiveLayers(p.Policy, b.reg, p.Plugins.Neurons()...)
	p.State = brain.NewState(p.Zone)
	return restoreState(b.store, p.State, p.Aggregator)
}

// channel builds the channel: it submits what it records to the inbox; the loop reads
// the inbox and sends through the channel.
func (s *service) channel(cfg config.Config, opts Options) error {
	store := s.store
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
func (s *service) coreLoop(cfg config.Config, opts Options, p *Parts) {
	store, plugs := s.store, p.Plugins
	var media brain.MediaFetcher // the channel downloads the files of user messages
	if s.tg != nil {
		media = s.tg
	}
	s.jobs = plugs.Jobs(s.think, p.Journal, p.Zone, nil, func(ctx context.Context, intents []brain.Intent) error {
		return s.loop.Apply(ctx, intents) // built below, before any job runs
	})
	deps := p.LoopDeps()
	deps.Media, deps.StateStore, deps.DeadLetters, deps.Drafter = media, store, store, drafter(cfg.Telegram, s.tg)
	if s.mcp != nil {
		deps.Tools = s.mcp // a run waits for the servers' first listings, at most their timeouts
	}
	users := userForgetter{store: store, index: p.Memory, states: p.Memory, sched: s.sched, usage: s.usage}
	if s.tg != nil {
		users.channel = s.tg
	}
	deps.Commands = &commands{persona: cfg.Persona.Name, forget: pluginForgetter{forgetter: users, set: plugs.set},
		reminders: s.sched, format: schedule.FormatPage, policy: p.Policy, next: p.Aggregator, plugins: plugs.set,
		outage: s.think, compact: s.compact, admins: admins(s.tg), mcp: s.mcp, states: p.Memory}
	if cfg.LLM.SpeechModel != "" && s.tg != nil { // the console cannot play a voice note
		deps.Speaker = p.Speech
		deps.Commands.(*commands).speech = voiceReplies{mode: cfg.VoiceMode(), daily: cfg.Limits.SpeechPerUserPerDay.Std(), meter: p.Speech}
	}
	lc := LoopConfig(cfg, opts.Console)
	lc.StopGrace = opts.StopGrace // 0: the loop's own
	s.loop = loop.New(s.inbox, s.ch, lc, deps)
}

// LoopConfig is the core loop's configuration from cfg; console says the operator at
// the keyboard talks to it (`anima chat`), who is never rate limited and sees each reply
// without a log line about it.
func LoopConfig(cfg config.Config, console bool) loop.Config {
	runsPerMinute := cfg.Limits.UserRunsPerMinute
	if runsPerMinute == 0 || console {
		runsPerMinute = -1 // no limit
	}
	return loop.Config{Tick: cfg.Brain.Tick.Std(), Apology: cfg.Persona.Apology, LogText: cfg.Log.MessageText,
		LogReplies: cfg.Log.Replies && !console, UserRunsPerMinute: runsPerMinute, Voice: cfg.VoiceMode()}
}

// LoopDeps are the core loop's collaborators from the parts: clock, state, layers,
// cognition, journal. The service adds the channel's media and drafts, the commands, the
// stored state and the dead letters; the simulator runs without them.
func (p *Parts) LoopDeps() loop.Deps {
	return loop.Deps{Clock: p.Clock, State: p.State, Autonomic: p.Autonomic, Aggregator: p.Aggregator, Thinker: p.Cognition,
		Journal: p.Journal, Refusals: p.Refusals, Logger: p.log, Registerer: p.reg}
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
	if s.tg != nil {
		// The console talks to its one user whatever telegram.allowed_users says.
		s.ctl.dead.may = func(d brain.DeadLetter) error { return MayRetry(d, cfg.Telegram) }
	}
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
