package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

// fireRetention is how long fire records of a recurring item are kept.
const fireRetention = 30 * 24 * time.Hour

// fireRecord is what BucketFires keeps of a firing (key chat | id | due).
type fireRecord struct {
	ID     string    `json:"id"`
	Due    time.Time `json:"due"`
	At     time.Time `json:"at"`
	Signal uint64    `json:"signal"`
}

func fireKey(item brain.ScheduleItem) []byte {
	return brain.Key(item.Chat, []byte(item.ID), brain.U64(uint64(item.Due.UnixNano())))
}

// FireDue fires every item due at or before now: for each, one transaction records a
// schedule_due signal in the inbox (Tx.Record), records the
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
	err := s.st.View(func(tx Tx) error {
		return tx.Scan(brain.BucketSchedules, nil, func(k, v []byte) error {
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
	err = s.st.Update(func(tx Tx) error {
		ok = false
		// The item may have been cancelled or fired since the scan.
		var cur brain.ScheduleItem
		found, err := tx.Get(brain.BucketSchedules, brain.ScheduleKey(it.Chat, it.ID), &cur)
		if err != nil || !found || !cur.Due.Equal(it.Due) {
			return err
		}
		fired, err := tx.GetRaw(brain.BucketFires, fireKey(it))
		if err != nil {
			return err
		}
		if fired == nil {
			sig = brain.Signal{
				Type: brain.SignalScheduleDue, Source: "scheduler",
				Chat: it.Chat, User: it.User, Text: it.Note, Detail: it.Reason, Kind: kind,
				Ref: it.ID, Due: it.Due, At: now,
			}
			id, err := tx.Record(sig)
			if err != nil {
				return err
			}
			sig.ID = id
			if err := tx.Put(brain.BucketFires, fireKey(it), fireRecord{ID: it.ID, Due: it.Due, At: now, Signal: id}); err != nil {
				return err
			}
			ok = true
		}
		if next.IsZero() {
			return tx.Delete(brain.BucketSchedules, brain.ScheduleKey(it.Chat, it.ID))
		}
		if err := pruneFires(tx, it, now); err != nil {
			return err
		}
		cur.Due = next
		return tx.Put(brain.BucketSchedules, brain.ScheduleKey(it.Chat, it.ID), cur)
	})
	if err != nil {
		return brain.Signal{}, false, fmt.Errorf("fire schedule %s of chat %d: %w", it.ID, it.Chat, err)
	}
	return sig, ok, nil
}

// pruneFires drops a recurring item's fire records older than fireRetention, keeping
// the latest.
func pruneFires(tx Tx, it brain.ScheduleItem, now time.Time) error {
	var old [][]byte
	prefix := brain.ScheduleKey(it.Chat, it.ID)
	err := tx.Scan(brain.BucketFires, prefix, func(k, v []byte) error {
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
		if err := tx.Delete(brain.BucketFires, k); err != nil {
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
func (s *Scheduler) rescan(fn func(tx Tx) error) error {
	s.mu.Lock()
	s.added = math.MaxInt64
	s.mu.Unlock()
	earliest, count := int64(math.MaxInt64), 0
	err := s.st.Update(func(tx Tx) error {
		if fn != nil {
			if err := fn(tx); err != nil {
				return err
			}
		}
		earliest, count = math.MaxInt64, 0
		return tx.Scan(brain.BucketSchedules, nil, func(_, v []byte) error {
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
