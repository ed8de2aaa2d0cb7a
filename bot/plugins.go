package bot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/storage"
)

// builtinPlugins is the one list of the plugins compiled into anima, each switched and
// configured by its section under plugins.<name>.
func builtinPlugins(cfg config.PluginsConfig, clock brain.Clock, log *slog.Logger, reg prometheus.Registerer) []plugins.Plugin {
	var ps []plugins.Plugin
	if il := cfg.Innerlife; il.Enabled {
		ps = append(ps, innerlife.New(innerlife.Config{DreamAt: il.DreamAt, DreamMinQuiet: il.DreamMinQuiet.Std()},
			innerlife.Options{Logger: log, Registerer: reg, Clock: clock}))
	}
	return ps
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

// loadPlugins creates the stateful plugins' buckets and lets each load its state.
func loadPlugins(store *storage.Store, set *plugins.Set) error {
	for _, name := range set.StatefulNames() {
		st, _ := set.Stateful(name)
		bucket := pluginBucketName(name)
		if err := store.Update(func(tx *storage.Tx) error { return tx.EnsureBucket(bucket) }); err != nil {
			return fmt.Errorf("plugin %s: %w", name, err)
		}
		if err := store.View(func(tx *storage.Tx) error { return st.Load(pluginBucket{tx: tx, name: bucket}) }); err != nil {
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
	if err := st.Apply(pluginBucket{tx: tx, name: pluginBucketName(c.Plugin)}, c, at); err != nil {
		set.Fail(c.Plugin, plugins.PartState, err)
		return fmt.Errorf("plugin %s: %w", c.Plugin, err)
	}
	return nil
}

// pluginForgetter deletes a user's data from the core store, then from every stateful
// plugin.
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
			return st.Forget(pluginBucket{tx: tx, name: pluginBucketName(name)}, user)
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
	journal brain.Journal
}

var _ plugins.Host = pluginHost{}

func (h pluginHost) Chats() ([]brain.Relationship, error) { return h.store.Relationships() }

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
