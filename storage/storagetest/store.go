// Package storagetest holds a memory-only store for testing the packages that keep their
// state through small transaction interfaces of their own (brain/memory, brain/schedule)
// without a store file: storage's buckets, keys, history, blobs and inbox, in maps.
//
// Its transactions are storage's in what those packages can see: Update commits all of
// fn's writes or none (an error rolls them back), View sees the last commit and may run
// beside an Update, OnCommit runs after a commit only. Each bucket is one
// pluginstest.Bucket, the repo's one in-memory bucket.
package storagetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/pluginstest"
	"github.com/anima-bot/anima/storage"
)

// ErrReadOnly is returned by a write inside View.
var ErrReadOnly = errors.New("write in a read-only transaction")

// Store is a memory-only store. Its methods are safe for concurrent use; the zero value
// is not usable, make one with New.
type Store struct {
	wmu sync.Mutex // serialises Update, as bbolt has one writer

	mu   sync.Mutex // guards cur and txns
	cur  *state     // the last commit; never written in place
	txns int        // transactions begun
}

// state is one commit's buckets and sequences.
type state struct {
	buckets map[string]pluginstest.Bucket
	seqs    map[string]uint64
}

// New returns an empty Store.
func New() *Store {
	return &Store{cur: &state{buckets: map[string]pluginstest.Bucket{}, seqs: map[string]uint64{}}}
}

// View runs fn in a read-only transaction over the last commit.
func (s *Store) View(fn func(tx *Tx) error) error {
	s.mu.Lock()
	cur := s.cur
	s.txns++
	s.mu.Unlock()
	return fn(&Tx{st: cur})
}

// Update runs fn in a read-write transaction: its writes are committed if it returns
// nil, and dropped if it returns an error.
func (s *Store) Update(fn func(tx *Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	cur := s.cur
	s.txns++
	s.mu.Unlock()
	tx := &Tx{
		st:       &state{buckets: maps.Clone(cur.buckets), seqs: maps.Clone(cur.seqs)},
		writable: true,
		copied:   map[string]bool{},
	}
	if err := fn(tx); err != nil {
		return err
	}
	s.mu.Lock()
	s.cur = tx.st
	s.mu.Unlock()
	for _, f := range tx.commits {
		f()
	}
	return nil
}

// Txns returns how many transactions (View or Update) have begun, for a test that
// something does not touch the store.
func (s *Store) Txns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txns
}

// Tx is a transaction of a Store. It has the methods of storage.Tx that the packages
// tested with it use.
type Tx struct {
	st       *state
	writable bool
	copied   map[string]bool // buckets this transaction has copied to write them
	commits  []func()
}

// read returns bucket name to read (nil if it was never written).
func (t *Tx) read(name string) pluginstest.Bucket { return t.st.buckets[name] }

// write returns bucket name to write, copied from the last commit on the first write.
func (t *Tx) write(name string) (pluginstest.Bucket, error) {
	if !t.writable {
		return nil, fmt.Errorf("bucket %s: %w", name, ErrReadOnly)
	}
	if !t.copied[name] {
		b := pluginstest.Bucket{}
		maps.Copy(b, t.st.buckets[name])
		t.st.buckets[name] = b
		t.copied[name] = true
	}
	return t.st.buckets[name], nil
}

// OnCommit runs fn after the transaction commits (never if it rolls back).
func (t *Tx) OnCommit(fn func()) { t.commits = append(t.commits, fn) }

// Put stores v as JSON under key.
func (t *Tx) Put(bucket string, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s entry: %w", bucket, err)
	}
	return t.PutRaw(bucket, key, data)
}

// PutRaw stores raw bytes under key.
func (t *Tx) PutRaw(bucket string, key, val []byte) error {
	b, err := t.write(bucket)
	if err != nil {
		return err
	}
	return b.Put(key, val)
}

// Get decodes the JSON under key into v and reports whether it was there.
func (t *Tx) Get(bucket string, key []byte, v any) (bool, error) {
	data := t.read(bucket).Get(key)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("decode %s entry: %w", bucket, err)
	}
	return true, nil
}

// GetRaw returns a copy of the bytes under key (nil if absent).
func (t *Tx) GetRaw(bucket string, key []byte) ([]byte, error) {
	return bytes.Clone(t.read(bucket).Get(key)), nil
}

// Peek returns the bytes under key (nil if absent); they must not be modified.
func (t *Tx) Peek(bucket string, key []byte) ([]byte, error) { return t.read(bucket).Get(key), nil }

// Delete removes key; a missing key is no error.
func (t *Tx) Delete(bucket string, key []byte) error {
	b, err := t.write(bucket)
	if err != nil {
		return err
	}
	return b.Delete(key)
}

// Scan calls fn for every key with the prefix, in key order. Returning brain.ErrStop
// ends the scan early without error.
func (t *Tx) Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	return stopped(t.read(bucket).Scan(prefix, fn))
}

// NextSeq returns the bucket's next sequence number.
func (t *Tx) NextSeq(bucket string) (uint64, error) {
	if !t.writable {
		return 0, fmt.Errorf("bucket %s: %w", bucket, ErrReadOnly)
	}
	t.st.seqs[bucket]++
	return t.st.seqs[bucket], nil
}

// PutBlob stores val under key, replacing what was there (storage keeps a blob in a
// bucket of its own; here it is a value like any other).
func (t *Tx) PutBlob(bucket string, key, val []byte) error { return t.PutRaw(bucket, key, val) }

// PeekBlob returns the blob under key (nil if absent).
func (t *Tx) PeekBlob(bucket string, key []byte) ([]byte, error) { return t.Peek(bucket, key) }

// DeleteBlob removes the blob under key.
func (t *Tx) DeleteBlob(bucket string, key []byte) error { return t.Delete(bucket, key) }

// Owed reports whether part is owed an upgrade and from which schema: the mark
// storage.Open leaves in the meta bucket (storage.OwedKey) when it upgrades an old file.
func (t *Tx) Owed(part string) (from int, ok bool, err error) {
	return storage.ReadOwed(part, t.read(storage.BucketMeta).Get(storage.OwedKey(part)))
}

// Settle removes part's owed mark.
func (t *Tx) Settle(part string) error { return t.Delete(storage.BucketMeta, storage.OwedKey(part)) }

// Record stores sig in the inbox under a fresh ID (its sequence) and returns the ID.
func (t *Tx) Record(sig brain.Signal) (uint64, error) {
	id, err := t.NextSeq(storage.BucketInbox)
	if err != nil {
		return 0, err
	}
	sig.ID = id
	return id, t.Put(storage.BucketInbox, brain.U64(id), sig)
}

// Pending returns the inbox, in the order it was recorded.
func (s *Store) Pending() ([]brain.Signal, error) {
	var sigs []brain.Signal
	err := s.View(func(tx *Tx) error {
		var err error
		sigs, err = storage.ReadInbox(tx)
		return err
	})
	return sigs, err
}

// stopped turns brain.ErrStop into the end of a walk.
func stopped(err error) error {
	if errors.Is(err, brain.ErrStop) {
		return nil
	}
	return err
}

// historyKeys returns chat's history keys (chat | seq) in order.
func (t *Tx) historyKeys(chat int64) []string {
	prefix := string(brain.ID64(chat))
	var keys []string
	for k := range t.read(storage.BucketHistory) {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
