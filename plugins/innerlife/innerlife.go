// Package innerlife is anima's inner life, after the "living loop" design: concerns (topics
// the user cares about, which decay when untouched and may carry a check-in), a private
// journal, and a nightly dream that digests the day. It is a plugin written against the
// public API of package plugins only: its state lives in its own bucket and changes only
// through brain.PluginChange intents applied in the turn's transaction; a due check-in is
// thought pressure that wakes cognition through the aggregator's proactive gates (wake
// reason concern_checkin); the dream is a daily job on the loop's clock.
package innerlife

import (
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins"
)

// Name is the plugin's name: its tools' prefix, its config section and its bucket.
const Name = "innerlife"

// Config is the plugin's section of the configuration (plugins.innerlife).
type Config struct {
	// DreamAt is the local time "HH:MM" of the nightly dream (default "04:00").
	DreamAt string
	// DreamMinQuiet is how long the user must have been quiet for a dream (default 30m).
	DreamMinQuiet time.Duration
	// DreamParallel is how many dreams run at once (default 2).
	DreamParallel int
}

// Options are the plugin's optional dependencies.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	Clock      brain.Clock // for the salience gauge (default: the wall clock)
}

// Plugin is the inner life. It is safe for concurrent use.
type Plugin struct {
	cfg   Config
	log   *slog.Logger
	m     *metrics
	clock brain.Clock

	mu       sync.Mutex
	concerns map[int64][]*Concern // by chat
	byID     map[string]*Concern
	entries  map[int64][]Entry    // latest entries per chat, oldest first (at most promptEntries)
	lastOpen map[int64]time.Time  // when each chat's latest journal entry was committed
	claimed  map[int64]bool       // chats whose current run was told an entry is written
	shown    map[string]time.Time // when a run last carried each due check-in
	dreamed  map[int64]time.Time  // last dream per chat
	due      checkinHeap          // pending check-ins by time
	seq      uint64
}

var (
	_ plugins.Plugin     = (*Plugin)(nil)
	_ plugins.Stateful   = (*Plugin)(nil)
	_ plugins.Contextual = (*Plugin)(nil)
	_ plugins.Scheduled  = (*Plugin)(nil)
	_ plugins.Reporter   = (*Plugin)(nil)
)

// New returns the plugin; zero Config fields take their defaults.
func New(cfg Config, opts Options) *Plugin {
	if cfg.DreamAt == "" {
		cfg.DreamAt = "04:00"
	}
	if cfg.DreamMinQuiet <= 0 {
		cfg.DreamMinQuiet = 30 * time.Minute
	}
	if cfg.DreamParallel <= 0 {
		cfg.DreamParallel = 2
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{cfg: cfg, log: log.With("component", "innerlife"), m: newMetrics(opts.Registerer),
		clock: opts.Clock, concerns: map[int64][]*Concern{}, byID: map[string]*Concern{}, entries: map[int64][]Entry{},
		lastOpen: map[int64]time.Time{}, claimed: map[int64]bool{}, shown: map[string]time.Time{}, dreamed: map[int64]time.Time{}}
	if p.clock == nil {
		p.clock = brain.RealClock{}
	}
	registerSalience(opts.Registerer, p.countSalience)
	return p
}

// countSalience counts the open concerns of salience s now.
func (p *Plugin) countSalience(s Salience) int {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.byID {
		if SalienceAt(c.Touched, now) == s {
			n++
		}
	}
	return n
}

// Name implements plugins.Plugin.
func (p *Plugin) Name() string { return Name }

// Tools implements plugins.Plugin.
func (p *Plugin) Tools() []brain.Tool { return []brain.Tool{concernTool{p}, journalTool{p}} }

// Neurons implements plugins.Plugin: the check-in neuron.
func (p *Plugin) Neurons() []brain.Neuron { return []brain.Neuron{checkinNeuron{p}} }

// Keys in the plugin's bucket: "c" chat id → concern, "j" chat at seq → entry, "d" chat →
// last dream, "l" chat → the time of the latest journal entry (the 5-minute slot). Chat ids are 8 bytes big-endian, so a chat's entries share a prefix.
func chatKey(tag byte, chat int64) []byte {
	k := make([]byte, 9, 32)
	k[0] = tag
	binary.BigEndian.PutUint64(k[1:], uint64(chat))
	return k
}

func concernKey(chat int64, id string) []byte { return append(chatKey('c', chat), id...) }

func entryKey(chat int64, at time.Time, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(chatKey('j', chat), uint64(at.UnixNano()))
	return binary.BigEndian.AppendUint64(k, seq)
}

// Load implements plugins.Stateful.
func (p *Plugin) Load(b plugins.Bucket) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := b.Scan([]byte{'c'}, func(_, v []byte) error {
		var c Concern
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("decode concern: %w", err)
		}
		p.put(&c)
		return nil
	}); err != nil {
		return err
	}
	if err := b.Scan([]byte{'j'}, func(_, v []byte) error {
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("decode journal entry: %w", err)
		}
		p.addEntry(e)
		return nil
	}); err != nil {
		return err
	}
	return b.Scan([]byte{'d'}, func(k, v []byte) error {
		var t time.Time
		if err := json.Unmarshal(v, &t); err != nil || len(k) != 9 {
			return fmt.Errorf("decode dream time: %w", err)
		}
		p.dreamed[int64(binary.BigEndian.Uint64(k[1:]))] = t
		return nil
	})
}

// put adds or replaces c in memory (p.mu held).
func (p *Plugin) put(c *Concern) {
	pending := !c.CheckInAt.IsZero() && !c.CheckInDone
	if old, ok := p.byID[c.ID]; ok {
		// Already in the heap unless the check-in is new, moved or asked again.
		pending = pending && (old.CheckInDone || !old.CheckInAt.Equal(c.CheckInAt))
		*old = *c
		c = old
	} else {
		p.byID[c.ID] = c
		p.concerns[c.Chat] = append(p.concerns[c.Chat], c)
	}
	if c.CheckInDone {
		delete(p.shown, c.ID)
	}
	if pending {
		heap.Push(&p.due, checkin{at: c.CheckInAt, planned: c.CheckInAt, id: c.ID})
	}
}

// remove drops concern id from memory (p.mu held).
func (p *Plugin) remove(id string) {
	c, ok := p.byID[id]
	if !ok {
		return
	}
	delete(p.byID, id)
	delete(p.shown, id)
	p.concerns[c.Chat] = slices.DeleteFunc(p.concerns[c.Chat], func(x *Concern) bool { return x.ID == id })
	if len(p.concerns[c.Chat]) == 0 {
		delete(p.concerns, c.Chat)
	}
}

// addEntry keeps e among its chat's latest entries (p.mu held).
func (p *Plugin) addEntry(e Entry) {
	es := append(p.entries[e.Chat], e)
	slices.SortStableFunc(es, func(a, b Entry) int { return a.At.Compare(b.At) })
	if len(es) > promptEntries {
		es = es[len(es)-promptEntries:]
	}
	p.entries[e.Chat] = es
	if e.At.After(p.lastOpen[e.Chat]) {
		p.lastOpen[e.Chat] = e.At
	}
}

// Forget implements plugins.Stateful: the user's private chat's concerns, journal and
// dreams (the plugin keeps nothing about users of groups).
func (p *Plugin) Forget(b plugins.Bucket, user int64) error {
	for _, tag := range []byte{'c', 'j', 'd', 'l'} {
		var keys [][]byte
		if err := b.Scan(chatKey(tag, user), func(k, _ []byte) error {
			keys = append(keys, slices.Clone(k))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	b.OnCommit(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range slices.Clone(p.concerns[user]) {
			p.remove(c.ID)
		}
		delete(p.entries, user)
		delete(p.lastOpen, user)
		delete(p.claimed, user)
		delete(p.dreamed, user)
	})
	return nil
}
