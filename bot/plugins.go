package bot

import (
	"context"
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
	"github.com/anima-bot/anima/storage"
)

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
	set, err := plugins.Install(&p.tools, plugins.Options{Logger: log, Registerer: reg, Store: pluginStore{store}},
		append(cfg.Plugins.Installed(plugins.Env{Logger: log, Registerer: reg, Clock: clock}), extra...)...)
	if err != nil {
		return nil, err
	}
	p.set = set
	if err := set.Load(); err != nil {
		return nil, err
	}
	return p, nil
}

// Tools returns cognition's tool registry as `anima run` builds it: memory's tools (whose
// search also reads the plugins' records), the schedule's, then the plugins'.
func (p *Plugins) Tools(mem *memory.Memory, sched *schedule.Scheduler) (*cognition.Registry, error) {
	tools := cognition.NewRegistry()
	for _, t := range slices.Concat(mem.Tools(pluginSearchers(p.set)...), sched.Tools(), p.tools) {
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
	return &journal{store: p.store, index: mem, facts: mem, states: mem, sched: sched, upkeep: mem, plugs: p.set, log: log.With("component", "journal")}
}

// Jobs returns the runner of the plugins' daily jobs (the inner life's dream) in the
// users' zones (zone is the default), thinking through thinker and committing through
// journal. chats lists the relationships the jobs see; nil means those the core loop
// last saved in the store. apply hands the core loop what a job's run changes in its
// state (the dream's self note and shares: see pluginHost.Commit); nil drops it.
func (p *Plugins) Jobs(thinker brain.Thinker, journal loop.Journal, zone *time.Location, chats func() ([]brain.Relationship, error),
	apply func(context.Context, []brain.Intent) error) *plugins.Jobs {
	return plugins.NewJobs(p.set, pluginHost{store: p.store, thinker: thinker, journal: journal, chats: chats, apply: apply},
		jobLog{store: p.store}, zone)
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

// pluginStore keeps the plugins' buckets in the store file (plugins.Store).
type pluginStore struct{ store *storage.Store }

var _ plugins.Store = pluginStore{}

func (s pluginStore) View(plugin string, fn func(plugins.Bucket) error) error {
	return s.store.View(func(tx *storage.Tx) error { return fn(pluginBucket{tx: tx, name: pluginBucketName(plugin)}) })
}

func (s pluginStore) Update(plugin string, fn func(plugins.Bucket) error) error {
	bucket := pluginBucketName(plugin)
	return s.store.Update(func(tx *storage.Tx) error {
		if err := tx.EnsureBucket(bucket); err != nil {
			return err
		}
		return fn(pluginBucket{tx: tx, name: bucket})
	})
}

func (s pluginStore) Erase(plugin string, fn func(plugins.Bucket) error) (erased bool, err error) {
	err = s.store.Update(func(tx *storage.Tx) error {
		if err := fn(pluginBucket{tx: tx, name: pluginBucketName(plugin)}); err != nil {
			return err
		}
		if tx.Deleted() == 0 {
			return nil
		}
		// What the plugin deleted stays in the file's free pages until a compaction.
		erased = true
		return tx.MarkErasure()
	})
	return erased, err
}

// pluginForgetter deletes a user's data from the core store, then from every stateful
// plugin (plugins.Set.Forget).
type pluginForgetter struct {
	forgetter
	set *plugins.Set
}

func (f pluginForgetter) ForgetUser(user int64) (storage.ForgetReport, error) {
	rep, err := f.forgetter.ForgetUser(user)
	if err != nil {
		return rep, err
	}
	erased, err := f.set.Forget(user)
	rep.Erased = rep.Erased || erased
	return rep, err
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
	chats   func() ([]brain.Relationship, error)        // nil: the saved relationships
	apply   func(context.Context, []brain.Intent) error // the core loop's Apply; nil: none
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

// Commit writes a job's run's lasting intents with the journal. Of those the core loop
// applies, only the relationship's self note and shares go to it (through apply, after
// the journal's commit); a job's run changes nothing else of the loop's state.
func (h pluginHost) Commit(ctx context.Context, chat, user int64, intents []brain.Intent, at time.Time) error {
	kept := make([]brain.Intent, 0, len(intents))
	var self []brain.Intent
	for _, in := range intents {
		switch in.(type) {
		case brain.SendMessage:
			continue
		case brain.SetSelfNote, brain.ShareLater:
			self = append(self, in)
			continue
		}
		if brain.HomeOf(in)&brain.InTurn != 0 {
			kept = append(kept, in)
		}
	}
	if _, err := h.journal.Commit(ctx, brain.TurnRecord{Chat: chat, User: user, Intents: kept, At: at}); err != nil {
		return err
	}
	if len(self) == 0 || h.apply == nil {
		return nil
	}
	return h.apply(ctx, self)
}

func (h pluginHost) Recent(chat int64, n int) ([]brain.Turn, error) { return h.store.History(chat, n) }

// pluginSearchers are the searchers core_memory_search consults besides memory: the
// plugins' (each reading its own bucket), when any plugin is searchable.
func pluginSearchers(set *plugins.Set) []memory.Searcher {
	if !set.Searching() {
		return nil
	}
	return []memory.Searcher{set}
}

// toolList collects the plugins' tools, to be registered after the core tools (the order
// the model sees them in).
type toolList []brain.Tool

func (l *toolList) Register(t brain.Tool) error { *l = append(*l, t); return nil }
