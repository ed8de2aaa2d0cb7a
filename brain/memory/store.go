package memory

import (
	"github.com/anima-bot/anima/brain"
)

// Tx is what memory needs of a store transaction: its buckets (brain.BucketFacts,
// brain.BucketSummaries, brain.BucketIndex), large values kept apart (the index's
// segments), the chat's history, whose entries it marks indexed, and the upgrade of an
// old index the store owes it (migrate.go). *storage.Tx implements it (bot checks that
// it does); storagetest.Tx serves the tests.
type Tx interface {
	Buckets
	Blobs
	History
	Upgrades
}

// Buckets are key-value buckets by name. Values are JSON (Get, Put) or raw bytes.
type Buckets interface {
	// Get decodes the JSON under key into v and reports whether it was there.
	Get(bucket string, key []byte, v any) (bool, error)
	// GetRaw returns a copy of the bytes under key (nil if absent).
	GetRaw(bucket string, key []byte) ([]byte, error)
	// Peek is GetRaw without the copy: the bytes are valid until the transaction ends
	// and must not be modified.
	Peek(bucket string, key []byte) ([]byte, error)
	// Put stores v as JSON under key.
	Put(bucket string, key []byte, v any) error
	// PutRaw stores val under key.
	PutRaw(bucket string, key, val []byte) error
	// Delete removes key; a missing key is no error.
	Delete(bucket string, key []byte) error
	// Scan calls fn for every key with prefix, in key order; fn's brain.ErrStop ends
	// it without error, another error ends it and is returned.
	Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error
}

// Blobs are large values, each written and deleted without rewriting its neighbours.
type Blobs interface {
	PutBlob(bucket string, key, val []byte) error
	// PeekBlob returns the blob under key (nil if absent), valid until the transaction
	// ends.
	PeekBlob(bucket string, key []byte) ([]byte, error)
	DeleteBlob(bucket string, key []byte) error
}

// History is the chats' history: entries keyed chat | seq (brain.HistorySeq), each a
// turn as JSON that brain.DecodeHistory reads with memory's mark.
type History interface {
	// HistoryFrom calls fn with chat's entries from Seq from on, oldest first;
	// brain.ErrStop ends it.
	HistoryFrom(chat int64, from uint64, fn func(k, v []byte) error) error
	// HistoryReverse calls fn with chat's entries, newest first; brain.ErrStop ends it.
	HistoryReverse(chat int64, fn func(k, v []byte) error) error
	// HistoryGet decodes chat's entry seq into v and reports whether it was there.
	HistoryGet(chat int64, seq uint64, v any) (bool, error)
	// HistoryRaw returns a copy of chat's entry seq (nil if absent).
	HistoryRaw(chat int64, seq uint64) ([]byte, error)
	// MarkIndexed marks chat's entry seq as indexed and reports whether it exists and
	// was not marked before.
	MarkIndexed(chat int64, seq uint64) (bool, error)
}

// Upgrades are the upgrades a store owes the parts of it that others own (storage.Open
// marks them when it upgrades an old file; see brain.PartIndex).
type Upgrades interface {
	// Owed reports whether part is owed an upgrade, and from which store schema.
	Owed(part string) (from int, ok bool, err error)
	// Settle records, with the transaction's commit, that part's upgrade is done.
	Settle(part string) error
}

// Store runs transactions over a Tx of the store's own type T (*storage.Tx for
// *storage.Store), which New infers. Update commits fn's writes if fn returns nil and
// none of them otherwise.
type Store[T Tx] interface {
	View(fn func(tx T) error) error
	Update(fn func(tx T) error) error
	// History returns up to n of chat's most recent turns, oldest first.
	History(chat int64, n int) ([]brain.Turn, error)
}

// txns is a Store with its transaction type forgotten, so Memory need not be generic.
type txns struct {
	view, update func(fn func(tx Tx) error) error
	history      func(chat int64, n int) ([]brain.Turn, error)
}

func txnsOf[T Tx](st Store[T]) txns {
	return txns{
		view:    func(fn func(Tx) error) error { return st.View(func(tx T) error { return fn(tx) }) },
		update:  func(fn func(Tx) error) error { return st.Update(func(tx T) error { return fn(tx) }) },
		history: st.History,
	}
}

// viewed is what read returns, read in a read-only transaction of st.
func viewed[V any](st txns, read func(tx Tx) (V, error)) (V, error) {
	var v V
	err := st.View(func(tx Tx) error {
		var err error
		v, err = read(tx)
		return err
	})
	return v, err
}

// View runs fn in a read-only transaction.
func (t txns) View(fn func(tx Tx) error) error { return t.view(fn) }

// Update runs fn in a read-write transaction.
func (t txns) Update(fn func(tx Tx) error) error { return t.update(fn) }

// History returns up to n of chat's most recent turns, oldest first.
func (t txns) History(chat int64, n int) ([]brain.Turn, error) { return t.history(chat, n) }
