package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/storage"
)

// builtinPlugins is the one list of the plugins compiled into anima, each switched and
// configured by its section under plugins.<name>.
func builtinPlugins(cfg config.PluginsConfig, clock brain.Clock, log *slog.Logger, reg prometheus.Registerer) []plugins.Plugin {
	var ps []plugins.Plugin
	if il := cfg.Innerlife; il.Enabled {
		ps = append(ps, innerlife.New(innerlife.Config{DreamAt: il.DreamAt, DreamMinQuiet: il.DreamMinQuiet.Std(), JournalPerDay: il.JournalPerDay},
			innerlife.Options{Logger: log, Registerer: reg, Clock: clock}))
	}
	return ps
}

// Plugins are the plugins installed as `anima run` installs them (the built-in ones
// switched on in the configuration, then any extra), their state loaded from the store:
// what cognition, the brain, the journal and the daily jobs get from them. Tools that
// replay turns outside the core loop (anima-sim) build their pieces from it too, so the
// wiring lives here once.
type Plugins struct {
	set   *plugins.Set
	store *storage.Store
	tools toolList // the plugins' tools, registered after the core tools
}

// NewPlugins installs the plugins of cfg (and extra) on clock and loads their state from
// store. log and reg may be nil.
func NewPlugins(cfg config.Config, store *storage.Store, clock brain.Clock, log *slog.Logger, reg prometheus.Registerer, extra ...plugins.Plugin) (*Plugins, error) {
	p := &Plugins{store: store}
	set, err := plugins.Install(&p.tools, plugins.Options{Logger: log, Registerer: reg},
		append(builtinPlugins(cfg.Plugins, clock, log, reg), extra...)...)
	if err != nil {
		return nil, err
	}
	p.set = set
	if err := loadPlugins(store, set); err != nil {
		return nil, err
	}
	return p, nil
}

// Tools returns cognition's tool registry as `anima run` builds it: memory's tools (whose
// search also reads the plugins' records), the schedule's, then the plugins'.
func (p *Plugins) Tools(mem *memory.Memory, sched *schedule.Scheduler) (*cognition.Registry, error) {
	tools := cognition.NewRegistry()
	for _, t := range slices.Concat(mem.Tools(pluginSearchers(p.store, p.set)...), sched.Tools(), p.tools) {
		if err := tools.Register(t); err != nil {
			return nil, fmt.Errorf("register tool: %w", err)
		}
	}
	return tools, nil
}

// Neurons are the plugins' neurons, for the autonomic layer.
func (p *Plugins) Neurons() []brain.Neuron { return p.set.Neurons() }

// Sections are the plugins' prompt sections for a run (cognition.Options.Sections).
func (p *Plugins) Sections(w brain.Wake, now time.Time) []brain.Section {
	return p.set.Sections(w, now)
}

// Journal returns the journal `anima run` commits turns through: inbox entries, history,
// search index, outbox, facts, schedules and the plugins' changes in one transaction.
func (p *Plugins) Journal(mem *memory.Memory, sched *schedule.Scheduler, log *slog.Logger) TurnJournal {
	return &journal{store: p.store, index: mem, facts: mem, sched: sched, upkeep: mem, plugs: p.set, log: log.With("component", "journal")}
}

// Jobs returns the runner of the plugins' daily jobs (the inner life's dream) in the
// users' zones (zone is the default), thinking through thinker and committing through
// journal. chats lists the relationships the jobs see; nil means those the core loop
// last saved in the store.
func (p *Plugins) Jobs(thinker brain.Thinker, journal loop.Journal, zone *time.Location, chats func() ([]brain.Relationship, error)) *plugins.Jobs {
	return plugins.NewJobs(p.set, pluginHost{store: p.store, thinker: thinker, journal: journal, chats: chats}, jobLog{store: p.store}, zone)
}

// pluginBucketName is the store bucket of a plugin's own state.
func pluginBucketName(plugin string) string { return "plugin_" + plugin }

// pluginBucket is a plugin's bucket inside one store transaction (plugins.Bucket).
type pluginBucket struct {
	tx   *storage.Tx
	name string
}

var _ plugins.Bucket = pluginBucket{}

func (b pluginBucket) Get(key []byte) []byte {
	v, err := b.tx.GetRaw(b.name, key)
	if err != nil {
		return nil
	}
	return v
}
func (b pluginBucket) Put(key, value []byte) error { return b.tx.PutRaw(b.name, key, value) }
func (b pluginBucket) Delete(key []byte) error     { return b.tx.Delete(b.name, key) }
func (b pluginBucket) Scan(prefix []byte, fn func(k, v []byte) error) error {
	return b.tx.Scan(b.name, prefix, fn)
}
func (b pluginBucket) OnCommit(fn func()) { b.tx.OnCommit(fn) }

// loadPlugins creates the stateful plugins' buckets and lets each load its state, in a
// read-write transaction so that a plugin may migrate its keys.
func loadPlugins(store *storage.Store, set *plugins.Set) error {
	for _, name := range set.StatefulNames() {
		st, _ := set.Stateful(name)
		bucket := pluginBucketName(name)
		if err := store.Update(func(tx *storage.Tx) error { return tx.EnsureBucket(bucket) }); err != nil {
			return fmt.Errorf("plugin %s: %w", name, err)
		}
		if err := store.Update(func(tx *storage.Tx) error { return st.Load(pluginBucket{tx: tx, name: bucket}) }); err != nil {
			return fmt.Errorf("plugin %s: load state: %w", name, err)
		}
	}
	return nil
}

// applyPluginTx hands a plugin its own change inside the turn's transaction. A change for
// a plugin that is not installed (switched off since) is logged, counted and dropped.
func applyPluginTx(tx *storage.Tx, set *plugins.Set, c brain.PluginChange, at time.Time) (err error) {
	st, ok := set.Stateful(c.Plugin)
	if !ok {
		set.Fail(c.Plugin, plugins.PartState, fmt.Errorf("change for a plugin that is not installed; dropped"))
		return nil
	}
	defer func() {
		if set.Recovered(c.Plugin, plugins.PartState, recover()) {
			err = fmt.Errorf("plugin %s: apply panicked", c.Plugin)
		}
	}()
	err = plugins.Apply(st, pluginBucket{tx: tx, name: pluginBucketName(c.Plugin)}, c, at)
	if errors.Is(err, plugins.ErrNoSubject) {
		// Running the turn again would not give it one: dropped, like a change for a
		// plugin that is not installed.
		set.Fail(c.Plugin, plugins.PartState, fmt.Errorf("%w; dropped", err))
		return nil
	}
	if err != nil {
		set.Fail(c.Plugin, plugins.PartState, err)
		return fmt.Errorf("plugin %s: %w", c.Plugin, err)
	}
	return nil
}

// pluginForgetter deletes a user's data from the core store, then from every stateful
// plugin (in every chat: each plugin's Forget removes what it keeps about the user in
// groups too).
type pluginForgetter struct {
	forgetter
	store *storage.Store
	set   *plugins.Set
}

func (f pluginForgetter) ForgetUser(user int64) (storage.ForgetReport, error) {
	rep, err := f.forgetter.ForgetUser(user)
	if err != nil {
		return rep, err
	}
	for _, name := range f.set.StatefulNames() {
		st, _ := f.set.Stateful(name)
		if err := f.store.Update(func(tx *storage.Tx) error {
			if err := st.Forget(pluginBucket{tx: tx, name: pluginBucketName(name)}, user); err != nil {
				return err
			}
			if tx.Deleted() == 0 {
				return nil
			}
			// What the plugin deleted stays in the file's free pages until a compaction.
			rep.Erased = true
			return tx.MarkErasure()
		}); err != nil {
			return rep, fmt.Errorf("plugin %s: forget: %w", name, err)
		}
	}
	return rep, nil
}

// jobLog keeps the plugins' jobs' last runs in the store's state bucket.
type jobLog struct{ store *storage.Store }

func jobKey(key string) []byte { return []byte("plugin_job:" + key) }

func (l jobLog) LastRun(key string) (time.Time, bool, error) {
	var t time.Time
	ok, err := l.store.Get(storage.BucketState, jobKey(key), &t)
	return t, ok, err
}

func (l jobLog) SetLastRun(key string, t time.Time) error {
	return l.store.Put(storage.BucketState, jobKey(key), t)
}

// pluginHost is what plugins' jobs get (plugins.Host): the saved relationships,
// cognition, and the journal for committing a run's lasting intents.
type pluginHost struct {
	store   *storage.Store
	thinker brain.Thinker
	journal loop.Journal
	chats   func() ([]brain.Relationship, error) // nil: the saved relationships
}

var _ plugins.Host = pluginHost{}

func (h pluginHost) Chats() ([]brain.Relationship, error) {
	if h.chats != nil {
		return h.chats()
	}
	return h.store.Relationships()
}

func (h pluginHost) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
	return h.thinker.Think(ctx, w)
}

func (h pluginHost) Commit(ctx context.Context, chat, user int64, intents []brain.Intent, at time.Time) error {
	kept := make([]brain.Intent, 0, len(intents))
	for _, in := range intents {
		if _, ok := in.(brain.SendMessage); ok {
			continue
		}
		if brain.HomeOf(in)&brain.InTurn != 0 {
			kept = append(kept, in)
		}
	}
	_, err := h.journal.Commit(ctx, brain.TurnRecord{Chat: chat, User: user, Intents: kept, At: at})
	return err
}

func (h pluginHost) Recent(chat int64, n int) ([]brain.Turn, error) { return h.store.History(chat, n) }

// pluginSearch is what core_memory_search finds in the plugins' own buckets
// (memory.Searcher), read in a read-only transaction.
type pluginSearch struct {
	store *storage.Store
	set   *plugins.Set
}

var _ memory.Searcher = pluginSearch{}

func (s pluginSearch) Search(chat, user int64, query string, limit int) []brain.Hit {
	return s.set.Search(func(plugin string, fn func(plugins.Bucket) error) error {
		return s.store.View(func(tx *storage.Tx) error { return fn(pluginBucket{tx: tx, name: pluginBucketName(plugin)}) })
	}, chat, user, query, limit)
}

// pluginSearchers are the searchers core_memory_search consults besides memory: the
// plugins', when any plugin is searchable.
func pluginSearchers(store *storage.Store, set *plugins.Set) []memory.Searcher {
	if !set.Searching() {
		return nil
	}
	return []memory.Searcher{pluginSearch{store: store, set: set}}
}

// toolList collects the plugins' tools, to be registered after the core tools (the order
// the model sees them in).
type toolList []brain.Tool

func (l *toolList) Register(t brain.Tool) error { *l = append(*l, t); return nil }
