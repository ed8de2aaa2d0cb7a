package plugins

import (
	"errors"
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Store keeps the stateful plugins' buckets, one per plugin, in the store's transactions
// (package bot implements it over the store file; pluginstest.Store in memory). Each
// method runs fn with plugin's bucket in one transaction and returns fn's error or the
// store's.
type Store interface {
	// View runs fn in a read-only transaction.
	View(plugin string, fn func(Bucket) error) error
	// Update runs fn in a read-write transaction, creating the bucket if it is missing;
	// the transaction commits when fn returns nil.
	Update(plugin string, fn func(Bucket) error) error
	// Erase is Update for deleting a user's data: when fn deleted a key, it also records
	// in the same transaction that the deleted data must leave the file, and erased is
	// true.
	Erase(plugin string, fn func(Bucket) error) (erased bool, err error)
}

// Load lets each stateful plugin read its state from its bucket, in list order, each in a
// read-write transaction (so that a plugin may migrate its keys). An error stops anima
// from starting. Without a Store there is nothing to load.
func (s *Set) Load() error {
	if s.store == nil {
		return nil
	}
	for _, name := range s.order {
		st := s.stateful[name]
		if err := s.store.Update(name, st.Load); err != nil {
			return fmt.Errorf("plugin %s: load state: %w", name, err)
		}
	}
	return nil
}

// ErrNoSubject is the error of a plugin change that does not say whose it is (User 0).
var ErrNoSubject = errors.New("plugin change without a subject user")

// Apply hands the stateful plugin c.Plugin its own change inside the turn's transaction;
// b is that plugin's bucket in it, at the turn's time. An error (the plugin's, or a
// panic) is logged, counted and returned: it rolls the turn back, and the turn runs
// again. A change for a plugin that is not installed (switched off since), or without a
// subject user (ErrNoSubject: no plugin stores an item without saying whose it is), is
// logged, counted and dropped, since running the turn again would not mend it.
func (s *Set) Apply(b Bucket, c brain.PluginChange, at time.Time) (err error) {
	st, ok := s.stateful[c.Plugin]
	if !ok {
		s.g.fail(c.Plugin, PartState, fmt.Errorf("change for a plugin that is not installed; dropped"))
		return nil
	}
	if c.User == 0 {
		s.g.fail(c.Plugin, PartState, fmt.Errorf("%s change in chat %d: %w; dropped", c.Plugin, c.Chat, ErrNoSubject))
		return nil
	}
	defer func() {
		if s.g.recovered(c.Plugin, PartState, recover()) {
			err = fmt.Errorf("plugin %s: apply panicked", c.Plugin)
		}
	}()
	if err := st.Apply(b, c, at); err != nil {
		s.g.fail(c.Plugin, PartState, err)
		return fmt.Errorf("plugin %s: %w", c.Plugin, err)
	}
	return nil
}

// Forget deletes everything every stateful plugin holds about user, in every chat (each
// plugin's Forget removes what it keeps about the user in groups too), one transaction
// per plugin. erased reports whether any plugin deleted something, which stays in the
// file's free pages until a compaction.
func (s *Set) Forget(user int64) (erased bool, err error) {
	if s.store == nil {
		return false, nil
	}
	for _, name := range s.order {
		st := s.stateful[name]
		e, err := s.store.Erase(name, func(b Bucket) error { return st.Forget(b, user) })
		erased = erased || e
		if err != nil {
			return erased, fmt.Errorf("plugin %s: forget: %w", name, err)
		}
	}
	return erased, nil
}

// Searching reports whether any plugin is Searchable.
func (s *Set) Searching() bool { return len(s.search) > 0 }

// Search asks every Searchable plugin for up to limit of user's records in chat matching
// query, each read from its bucket in a read-only transaction (memory.Searcher). A
// failing plugin (an error or a panic) is logged, counted and left out.
func (s *Set) Search(chat, user int64, query string, limit int) []brain.Hit {
	if s.store == nil {
		return nil
	}
	var out []brain.Hit
	for _, ns := range s.search {
		var hits []brain.Hit
		err := s.store.View(ns.name, func(b Bucket) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			hits, err = ns.s.Search(b, chat, user, query, limit)
			return err
		})
		if err != nil {
			s.g.fail(ns.name, PartSearch, fmt.Errorf("search: %w", err))
			continue
		}
		out = append(out, hits...)
	}
	return out
}
