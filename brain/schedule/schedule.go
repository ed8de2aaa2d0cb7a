// Package schedule keeps anima's reminders and follow-ups: one-shot or recurring (cron in
// the user's zone) items in the store, fired exactly once each — a due item becomes a
// schedule_due signal in the inbox in the same transaction that removes or advances it.
package schedule

import (
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Options tune a Scheduler. The zero value is usable.
type Options struct {
	Clock brain.Clock
	// DefaultZone is the zone of requests that name none (default UTC).
	DefaultZone *time.Location
	Logger      *slog.Logger
	// Registerer receives the package's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// MaxPending caps a chat's pending items (default 50; negative: no cap), MaxPerRun
	// the items one cognition run may schedule (default 4; negative: no cap).
	MaxPending, MaxPerRun int
	// Refusals counts what the caps refused (nil: not counted).
	Refusals *brain.Refusals
}

// Scheduler stores schedule items and fires them. Its methods are safe for concurrent
// use.
type Scheduler struct {
	st      txns
	clock   brain.Clock
	zone    *time.Location
	log     *slog.Logger
	metrics *metrics

	// op serialises the methods that run their own transactions (FireDue, Add, Cancel).
	op sync.Mutex

	maxPending, maxPerRun int
	refusals              *brain.Refusals

	// mu guards the fields below; it is never held across disk I/O.
	mu sync.Mutex
	// earliest is a lower bound (unix ns) on the due time of every stored item;
	// math.MaxInt64 when there is none, math.MinInt64 until the store was first read.
	earliest int64
	// added is the earliest due time added (AddTx) since the running rescan began.
	added int64
}

// New returns a Scheduler over st (a *storage.Store in anima). It reads the store on the
// first FireDue.
func New[T Tx](st Store[T], opts Options) *Scheduler {
	if opts.Clock == nil {
		opts.Clock = brain.RealClock{}
	}
	if opts.DefaultZone == nil {
		opts.DefaultZone = time.UTC
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxPending == 0 {
		opts.MaxPending = 50
	}
	if opts.MaxPerRun == 0 {
		opts.MaxPerRun = 4
	}
	return &Scheduler{
		maxPending: opts.MaxPending,
		maxPerRun:  opts.MaxPerRun,
		refusals:   opts.Refusals,
		st:         txnsOf(st),
		clock:      opts.Clock,
		zone:       opts.DefaultZone,
		log:        opts.Logger.With("component", "schedule"),
		metrics:    newMetrics(opts.Registerer),
		earliest:   math.MinInt64,
		added:      math.MaxInt64,
	}
}
