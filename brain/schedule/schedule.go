// Package schedule keeps anima's reminders and follow-ups: one-shot or recurring (cron in
// the user's zone) items in the store, fired exactly once each — a due item becomes a
// schedule_due signal in the inbox in the same transaction that removes or advances it.
package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
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

// ErrTooMany is returned (wrapped) by AddTx when the chat already has MaxPending items.
var ErrTooMany = errors.New("too many pending reminders")

// fireRetention is how long fire records of a recurring item are kept.
const fireRetention = 30 * 24 * time.Hour

// Scheduler stores schedule items and fires them. Its methods are safe for concurrent
// use.
type Scheduler struct {
	st      *storage.Store
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

// New returns a Scheduler over st. It reads the store on the first FireDue.
func New(st *storage.Store, opts Options) *Scheduler {
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
		st:         st,
		clock:      opts.Clock,
		zone:       opts.DefaultZone,
		log:        opts.Logger.With("component", "schedule"),
		metrics:    newMetrics(opts.Registerer),
		earliest:   math.MinInt64,
		added:      math.MaxInt64,
	}
}

func itemKey(chat int64, id string) []byte { return storage.Key(chat, []byte(id)) }

// fireRecord is what BucketFires keeps of a firing (key chat | id | due).
type fireRecord struct {
	ID     string    `json:"id"`
	Due    time.Time `json:"due"`
	At     time.Time `json:"at"`
	Signal uint64    `json:"signal"`
}

func fireKey(item brain.ScheduleItem) []byte {
	return storage.Key(item.Chat, []byte(item.ID), storage.U64(uint64(item.Due.UnixNano())))
}

// Add stores item (replacing an item of the chat with the same id). An item whose
// occurrence at item.Due already fired is not stored again, so replaying a Schedule
// intent is harmless. Errors are the store's.
func (s *Scheduler) Add(item brain.ScheduleItem) error {
	s.op.Lock()
	defer s.op.Unlock()
	return s.st.Update(func(tx *storage.Tx) error { return s.AddTx(tx, item) })
}

// AddTx is Add inside the caller's transaction (for example storage.Commit.Also, so the
// item lands with the turn that scheduled it).
func (s *Scheduler) AddTx(tx *storage.Tx, item brain.ScheduleItem) error {
	if !validID(item.ID) || item.Due.IsZero() {
		return fmt.Errorf("add schedule %q: %w: bad id or no due time", item.ID, ErrInvalid)
	}
	fired, err := tx.GetRaw(storage.BucketFires, fireKey(item))
	if err != nil {
		return fmt.Errorf("add schedule %s: %w", item.ID, err)
	}
	if fired != nil {
		return nil
	}
	existed, err := tx.GetRaw(storage.BucketSchedules, itemKey(item.Chat, item.ID))
	if err != nil {
		return fmt.Errorf("add schedule %s: %w", item.ID, err)
	}
	if existed == nil && s.maxPending > 0 {
		// The tool checks too, but turns committed together could pass it together.
		n, err := countTx(tx, item.Chat)
		if err != nil {
			return fmt.Errorf("add schedule %s: %w", item.ID, err)
		}
		if n >= s.maxPending {
			s.refusals.Refused(brain.LimitPendingReminders)
			return fmt.Errorf("add schedule %s of chat %d: %w (%d)", item.ID, item.Chat, ErrTooMany, s.maxPending)
		}
	}
	if err := tx.Put(storage.BucketSchedules, itemKey(item.Chat, item.ID), item); err != nil {
		return fmt.Errorf("add schedule %s: %w", item.ID, err)
	}
	if existed == nil {
		s.metrics.pending.Inc()
	}
	due := item.Due.UnixNano()
	s.mu.Lock()
	s.earliest = min(s.earliest, due)
	s.added = min(s.added, due)
	s.mu.Unlock()
	return nil
}

// Cancel removes the item id of chat and reports whether it was there. Errors are the
// store's.
func (s *Scheduler) Cancel(chat int64, id string) (bool, error) {
	if !validID(id) {
		return false, nil
	}
	s.op.Lock()
	defer s.op.Unlock()
	var found bool
	err := s.rescan(func(tx *storage.Tx) error {
		var err error
		found, err = cancelTx(tx, chat, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("cancel schedule %s of chat %d: %w", id, chat, err)
	}
	return found, nil
}

// CancelTx is Cancel inside the caller's transaction (storage.Commit.Also, so the item
// goes with the turn that cancelled it). The earliest due time FireDue keeps stays a lower
// bound; the next FireDue that scans recomputes it.
func (s *Scheduler) CancelTx(tx *storage.Tx, chat int64, id string) (bool, error) {
	if !validID(id) {
		return false, nil
	}
	found, err := cancelTx(tx, chat, id)
	if err != nil {
		return false, fmt.Errorf("cancel schedule %s of chat %d: %w", id, chat, err)
	}
	if found {
		s.metrics.pending.Dec()
	}
	return found, nil
}

// Recount recomputes the earliest due time and the pending gauge from the store, after
// items went without the scheduler (a user's /forget deletes their reminders).
func (s *Scheduler) Recount() error {
	s.op.Lock()
	defer s.op.Unlock()
	if err := s.rescan(nil); err != nil {
		return fmt.Errorf("recount schedules: %w", err)
	}
	return nil
}

func cancelTx(tx *storage.Tx, chat int64, id string) (bool, error) {
	raw, err := tx.GetRaw(storage.BucketSchedules, itemKey(chat, id))
	if err != nil || raw == nil {
		return false, err
	}
	return true, tx.Delete(storage.BucketSchedules, itemKey(chat, id))
}

// countTx counts chat's pending items.
func countTx(tx *storage.Tx, chat int64) (int, error) {
	n := 0
	err := tx.Scan(storage.BucketSchedules, storage.ID64(chat), func(_, _ []byte) error { n++; return nil })
	return n, err
}

// Pending returns how many items chat has. Errors are the store's.
func (s *Scheduler) Pending(chat int64) (int, error) {
	var n int
	err := s.st.View(func(tx *storage.Tx) error {
		var err error
		n, err = countTx(tx, chat)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count schedules of chat %d: %w", chat, err)
	}
	return n, nil
}

// List returns chat's items, soonest first. Errors are the store's.
func (s *Scheduler) List(chat int64) ([]brain.ScheduleItem, error) {
	var items []brain.ScheduleItem
	err := s.st.View(func(tx *storage.Tx) error {
		return tx.Scan(storage.BucketSchedules, storage.ID64(chat), func(_, v []byte) error {
			var it brain.ScheduleItem
			if err := json.Unmarshal(v, &it); err != nil {
				return fmt.Errorf("decode schedule: %w", err)
			}
			items = append(items, it)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list schedules of chat %d: %w", chat, err)
	}
	slices.SortFunc(items, func(a, b brain.ScheduleItem) int { return a.Due.Compare(b.Due) })
	return items, nil
}

// FireDue fires every item due at or before now: for each, one transaction records a
// schedule_due signal in the inbox (the layout of storage.Store.Record), records the
// fire, and deletes a one-shot item or moves a recurring one to its first time after now
// (an item missed for days fires once). It returns the recorded signals, IDs set, for
// the core loop. When nothing is due it returns at once without touching the store and
// without allocating. Errors are the store's; items not yet fired stay due.
func (s *Scheduler) FireDue(now time.Time) ([]brain.Signal, error) {
	n := now.UnixNano()
	s.mu.Lock()
	idle := n < s.earliest
	s.mu.Unlock()
	if idle {
		return nil, nil
	}
	s.op.Lock()
	defer s.op.Unlock()

	var due []brain.ScheduleItem
	err := s.st.View(func(tx *storage.Tx) error {
		return tx.Scan(storage.BucketSchedules, nil, func(k, v []byte) error {
			var it brain.ScheduleItem
			if err := json.Unmarshal(v, &it); err != nil {
				s.log.Error("undecodable schedule item skipped", "key", fmt.Sprintf("%x", k), "err", err)
				return nil
			}
			if !it.Due.After(now) {
				due = append(due, it)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("fire due schedules: %w", err)
	}
	slices.SortFunc(due, func(a, b brain.ScheduleItem) int { return a.Due.Compare(b.Due) })

	var sigs []brain.Signal
	var errs []error
	for _, it := range due {
		sig, ok, err := s.fire(it, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			sigs = append(sigs, sig)
			s.metrics.fired.WithLabelValues(string(sig.Kind)).Inc()
		}
	}
	// Recompute the bound (and the gauge) from what is left.
	if err := s.rescan(nil); err != nil {
		errs = append(errs, err)
	}
	return sigs, errors.Join(errs...)
}

// fire fires one item in its own transaction. ok is false when the occurrence had
// already fired (the item is then only advanced or removed).
func (s *Scheduler) fire(it brain.ScheduleItem, now time.Time) (sig brain.Signal, ok bool, err error) {
	var next time.Time
	if it.Cron != "" {
		if next, err = nextAfter(it, now); err != nil {
			s.log.Error("recurring schedule cannot advance; it fires once more and is removed",
				"chat", it.Chat, "id", it.ID, "cron", it.Cron, "err", err)
			next = time.Time{}
		}
	}
	kind := it.Kind
	if kind == "" {
		kind = brain.KindReminder
	}
	err = s.st.Update(func(tx *storage.Tx) error {
		ok = false
		// The item may have been cancelled or fired since the scan.
		var cur brain.ScheduleItem
		found, err := tx.Get(storage.BucketSchedules, itemKey(it.Chat, it.ID), &cur)
		if err != nil || !found || !cur.Due.Equal(it.Due) {
			return err
		}
		fired, err := tx.GetRaw(storage.BucketFires, fireKey(it))
		if err != nil {
			return err
		}
		if fired == nil {
			id, err := tx.NextSeq(storage.BucketInbox)
			if err != nil {
				return err
			}
			sig = brain.Signal{
				ID: id, Type: brain.SignalScheduleDue, Source: "scheduler",
				Chat: it.Chat, User: it.User, Text: it.Note, Detail: it.Reason, Kind: kind,
				Ref: it.ID, Due: it.Due, At: now,
			}
			if err := tx.Put(storage.BucketInbox, storage.U64(id), sig); err != nil {
				return err
			}
			if err := tx.Put(storage.BucketFires, fireKey(it), fireRecord{ID: it.ID, Due: it.Due, At: now, Signal: id}); err != nil {
				return err
			}
			ok = true
		}
		if next.IsZero() {
			return tx.Delete(storage.BucketSchedules, itemKey(it.Chat, it.ID))
		}
		if err := pruneFires(tx, it, now); err != nil {
			return err
		}
		cur.Due = next
		return tx.Put(storage.BucketSchedules, itemKey(it.Chat, it.ID), cur)
	})
	if err != nil {
		return brain.Signal{}, false, fmt.Errorf("fire schedule %s of chat %d: %w", it.ID, it.Chat, err)
	}
	return sig, ok, nil
}

// pruneFires drops a recurring item's fire records older than fireRetention, keeping
// the latest.
func pruneFires(tx *storage.Tx, it brain.ScheduleItem, now time.Time) error {
	var old [][]byte
	prefix := storage.Key(it.Chat, []byte(it.ID))
	err := tx.Scan(storage.BucketFires, prefix, func(k, v []byte) error {
		var r fireRecord
		if json.Unmarshal(v, &r) == nil && now.Sub(r.At) > fireRetention && !r.Due.Equal(it.Due) {
			old = append(old, slices.Clone(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range old {
		if err := tx.Delete(storage.BucketFires, k); err != nil {
			return err
		}
	}
	return nil
}

// rescan runs fn (if any) and then recomputes the earliest due time and the pending gauge
// from the items left, in one write transaction. AddTx calls made meanwhile are folded in.
// A write transaction, even without fn, waits for any transaction that already called
// AddTx to commit, so the scan sees its item; a read transaction would not, and the
// reset of added would then drop that item's due time from the bound until the next Add.
func (s *Scheduler) rescan(fn func(tx *storage.Tx) error) error {
	s.mu.Lock()
	s.added = math.MaxInt64
	s.mu.Unlock()
	earliest, count := int64(math.MaxInt64), 0
	err := s.st.Update(func(tx *storage.Tx) error {
		if fn != nil {
			if err := fn(tx); err != nil {
				return err
			}
		}
		earliest, count = math.MaxInt64, 0
		return tx.Scan(storage.BucketSchedules, nil, func(_, v []byte) error {
			var it struct {
				Due time.Time `json:"due"`
			}
			if err := json.Unmarshal(v, &it); err != nil {
				return nil // logged by FireDue's scan
			}
			earliest = min(earliest, it.Due.UnixNano())
			count++
			return nil
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.earliest = min(earliest, s.added)
	s.mu.Unlock()
	s.metrics.pending.Set(float64(count))
	return nil
}

// Run fires due items every interval (default 10 s) on the real clock, starting at once,
// and hands the signals to emit, until ctx is done. A failed FireDue or emit is logged and
// retried on the next tick; emitted signals are already in the inbox, so none is lost.
func (s *Scheduler) Run(ctx context.Context, every time.Duration, emit func(ctx context.Context, sigs []brain.Signal) error) error {
	if every <= 0 {
		every = 10 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		sigs, err := s.FireDue(s.clock.Now())
		if err != nil {
			s.log.Error("firing due schedules failed", "err", err)
		}
		if len(sigs) > 0 {
			if err := emit(ctx, sigs); err != nil {
				s.log.Warn("handing fired schedules to the core loop failed; they stay in the inbox",
					"signals", len(sigs), "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
