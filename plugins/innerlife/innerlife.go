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
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins"
	"github.com/anima-bot/anima/plugins/setting"
)

// Name is the plugin's name: its tools' prefix, its config section and its bucket.
const Name = "innerlife"

// Options are the plugin's optional dependencies.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	Clock      brain.Clock // for the salience gauge (default: the wall clock)
}

// subject is whose records they are: a user in a chat (in a private chat, chat == user).
type subject struct{ chat, user int64 }

// subjectOf is whose records a run or a tool call of user in chat reads and writes. A
// private chat's id is its user's, so a private chat's run that came without a user (a
// relationship saved before users were recorded) is still its user's; a group's never is.
func subjectOf(chat, user int64) subject {
	if user == 0 && chat > 0 {
		user = chat
	}
	return subject{chat, user}
}

// Plugin is the inner life. It is safe for concurrent use.
type Plugin struct {
	cfg   Config
	log   *slog.Logger
	m     *metrics
	clock brain.Clock

	mu          sync.Mutex
	concerns    map[subject][]*Concern
	byID        map[string]*Concern
	entries     map[subject][]Entry      // entries not folded, oldest first (at most keptEntries)
	reflections map[subject][]Reflection // latest reflections, oldest first (at most promptReflections)
	folding     map[subject][]Entry      // the entries a dream now going on was shown to fold
	written     map[subject][]time.Time  // times of the entries of the last JournalWindow, oldest first
	lastOpen    map[subject]time.Time    // when the latest journal entry was committed
	claimed     map[subject]bool         // whose current run was told an entry is written
	shown       map[string]time.Time     // when a run last carried each due check-in
	dreamed     map[int64]time.Time      // last dream per chat
	due         checkinHeap              // pending check-ins by time
	seq         uint64
}

var (
	_ plugins.Plugin     = (*Plugin)(nil)
	_ plugins.Toolbox    = (*Plugin)(nil)
	_ plugins.Sensor     = (*Plugin)(nil)
	_ plugins.Stateful   = (*Plugin)(nil)
	_ plugins.Contextual = (*Plugin)(nil)
	_ plugins.Scheduled  = (*Plugin)(nil)
	_ plugins.Reporter   = (*Plugin)(nil)
	_ plugins.Commander  = (*Plugin)(nil)
	_ plugins.Detailer   = (*Plugin)(nil)
)

// New returns the plugin; zero Config fields take their defaults.
func New(cfg Config, opts Options) *Plugin {
	if cfg.DreamAt == "" {
		cfg.DreamAt = DefaultDreamAt
	}
	if cfg.DreamMinQuiet <= 0 {
		cfg.DreamMinQuiet = setting.Duration(DefaultDreamMinQuiet)
	}
	if cfg.JournalPerDay <= 0 {
		cfg.JournalPerDay = DefaultJournalPerDay
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{cfg: cfg, log: log.With("component", "innerlife"), m: newMetrics(opts.Registerer),
		clock: opts.Clock, concerns: map[subject][]*Concern{}, byID: map[string]*Concern{}, entries: map[subject][]Entry{},
		reflections: map[subject][]Reflection{}, folding: map[subject][]Entry{},
		written: map[subject][]time.Time{}, lastOpen: map[subject]time.Time{}, claimed: map[subject]bool{},
		shown: map[string]time.Time{}, dreamed: map[int64]time.Time{}}
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

// Tools implements plugins.Toolbox.
func (p *Plugin) Tools() []brain.Tool {
	return []brain.Tool{concernTool{p}, journalTool{p}, reflectTool{p}, selfNoteTool{}, shareLaterTool{}}
}

// Neurons implements plugins.Sensor: the check-in neuron.
func (p *Plugin) Neurons() []brain.Neuron { return []brain.Neuron{checkinNeuron{p}} }

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
		p.concerns[c.subject()] = append(p.concerns[c.subject()], c)
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
	s := c.subject()
	p.concerns[s] = slices.DeleteFunc(p.concerns[s], func(x *Concern) bool { return x.ID == id })
	if len(p.concerns[s]) == 0 {
		delete(p.concerns, s)
	}
}

// keptEntries is how many entries not yet folded are kept in memory per subject (the
// oldest beyond it stay unfolded in the store, found by memory search).
const keptEntries = 200

// addEntry keeps e among its subject's entries not folded (p.mu held).
func (p *Plugin) addEntry(e Entry) {
	s := e.subject()
	p.entries[s] = keepLatest(p.entries[s], e, func(e Entry) time.Time { return e.At }, keptEntries)
	if e.At.After(p.lastOpen[s]) {
		p.lastOpen[s] = e.At
	}
	ws := append(p.written[s], e.At)
	slices.SortFunc(ws, time.Time.Compare)
	newest := ws[len(ws)-1]
	p.written[s] = slices.DeleteFunc(ws, func(t time.Time) bool { return newest.Sub(t) >= JournalWindow })
}

// keepLatest adds x to xs, which are in the order of their times (at), in its place after
// those of the same time, and keeps the latest n.
func keepLatest[T any](xs []T, x T, at func(T) time.Time, n int) []T {
	xs = append(xs, x)
	slices.SortStableFunc(xs, func(a, b T) int { return at(a).Compare(at(b)) })
	if len(xs) > n {
		xs = xs[len(xs)-n:]
	}
	return xs
}

// writtenSince counts s's entries in the JournalWindow before now (p.mu held).
func (p *Plugin) writtenSince(s subject, now time.Time) int {
	n := 0
	for _, t := range p.written[s] {
		if d := now.Sub(t); d < JournalWindow && d > -JournalWindow {
			n++
		}
	}
	return n
}

// openCount counts s's concerns that are not dormant at now (p.mu held).
func (p *Plugin) openCount(s subject, now time.Time) int {
	n := 0
	for _, c := range p.concerns[s] {
		if SalienceAt(c.Touched, now) != Dormant {
			n++
		}
	}
	return n
}
