package schedule

import (
	"github.com/anima-bot/anima/brain"
)

// Tx is what the scheduler needs of a store transaction: its two buckets
// (brain.BucketSchedules, keyed chat | id, and brain.BucketFires, chat | id | due)
// and the inbox, where a fired item's signal lands in the same transaction that removes
// or advances the item. *storage.Tx implements it (bot checks that it does);
// storagetest.Tx serves the tests.
type Tx interface {
	// Get decodes the JSON under key into v and reports whether it was there.
	Get(bucket string, key []byte, v any) (bool, error)
	// GetRaw returns a copy of the bytes under key (nil if absent).
	GetRaw(bucket string, key []byte) ([]byte, error)
	// Put stores v as JSON under key.
	Put(bucket string, key []byte, v any) error
	// Delete removes key; a missing key is no error.
	Delete(bucket string, key []byte) error
	// Scan calls fn for every key with prefix, in key order; fn's brain.ErrStop ends
	// it without error, another error ends it and is returned.
	Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error
	// Record stores sig in the inbox under a fresh ID and returns the ID.
	Record(sig brain.Signal) (uint64, error)
}

// Store runs transactions over a Tx of the store's own type T (*storage.Tx for
// *storage.Store), which New infers. Update commits fn's writes if fn returns nil and
// none of them otherwise.
type Store[T Tx] interface {
	View(fn func(tx T) error) error
	Update(fn func(tx T) error) error
}

// txns is a Store with its transaction type forgotten, so a Scheduler need not be
// generic.
type txns struct {
	view, update func(fn func(tx Tx) error) error
}

func txnsOf[T Tx](st Store[T]) txns {
	return txns{
		view:   func(fn func(Tx) error) error { return st.View(func(tx T) error { return fn(tx) }) },
		update: func(fn func(Tx) error) error { return st.Update(func(tx T) error { return fn(tx) }) },
	}
}

// View runs fn in a read-only transaction.
func (t txns) View(fn func(tx Tx) error) error { return t.view(fn) }

// Update runs fn in a read-write transaction.
func (t txns) Update(fn func(tx Tx) error) error { return t.update(fn) }
