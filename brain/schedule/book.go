package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/anima-bot/anima/brain"
)

// ErrTooMany is returned (wrapped) by AddTx when the chat already has MaxPending items.
var ErrTooMany = errors.New("too many pending reminders")

// Add stores item (replacing an item of the chat with the same id). An item whose
// occurrence at item.Due already fired is not stored again, so replaying a Schedule
// intent is harmless. Errors are the store's.
func (s *Scheduler) Add(item brain.ScheduleItem) error {
	s.op.Lock()
	defer s.op.Unlock()
	return s.st.Update(func(tx Tx) error { return s.AddTx(tx, item) })
}

// AddTx is Add inside the caller's transaction (for example storage.Commit.Also, so the
// item lands with the turn that scheduled it).
func (s *Scheduler) AddTx(tx Tx, item brain.ScheduleItem) error {
	if !validID(item.ID) || item.Due.IsZero() {
		return fmt.Errorf("add schedule %q: %w: bad id or no due time", item.ID, ErrInvalid)
	}
	fired, err := tx.GetRaw(brain.BucketFires, fireKey(item))
	if err != nil {
		return fmt.Errorf("add schedule %s: %w", item.ID, err)
	}
	if fired != nil {
		return nil
	}
	existed, err := tx.GetRaw(brain.BucketSchedules, brain.ScheduleKey(item.Chat, item.ID))
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
	if err := tx.Put(brain.BucketSchedules, brain.ScheduleKey(item.Chat, item.ID), item); err != nil {
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
	err := s.rescan(func(tx Tx) error {
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
func (s *Scheduler) CancelTx(tx Tx, chat int64, id string) (bool, error) {
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

func cancelTx(tx Tx, chat int64, id string) (bool, error) {
	raw, err := tx.GetRaw(brain.BucketSchedules, brain.ScheduleKey(chat, id))
	if err != nil || raw == nil {
		return false, err
	}
	return true, tx.Delete(brain.BucketSchedules, brain.ScheduleKey(chat, id))
}

// countTx counts chat's pending items.
func countTx(tx Tx, chat int64) (int, error) {
	n := 0
	err := tx.Scan(brain.BucketSchedules, brain.ID64(chat), func(_, _ []byte) error { n++; return nil })
	return n, err
}

// Pending returns how many items chat has. Errors are the store's.
func (s *Scheduler) Pending(chat int64) (int, error) {
	var n int
	err := s.st.View(func(tx Tx) error {
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
	err := s.st.View(func(tx Tx) error {
		return tx.Scan(brain.BucketSchedules, brain.ID64(chat), func(_, v []byte) error {
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
