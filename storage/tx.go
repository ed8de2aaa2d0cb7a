package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
)

// Tx is a read-write or read-only transaction over the store's buckets, for callers that
// need several writes to land together.
type Tx struct {
	tx         *bolt.Tx
	epochTurns uint64  // turns a history epoch holds (history.go)
	eps        []epoch // history's epochs, once listed
	deleted    int     // keys Delete, DeletePrefix and HistoryDelete removed
}

func (s *Store) newTx(tx *bolt.Tx) *Tx { return &Tx{tx: tx, epochTurns: s.epochTurns} }

func (t *Tx) bucket(name string) (*bolt.Bucket, error) {
	b := t.tx.Bucket([]byte(name))
	if b == nil {
		return nil, fmt.Errorf("no bucket %q", name)
	}
	if appendMostly[name] || strings.HasPrefix(name, epochPrefix) {
		b.FillPercent = appendFill
	}
	return b, nil
}

// appendMostly are the buckets whose keys mostly grow at the end of their chat's range
// (history by sequence, memory's index by turn and segment): their pages are split
// nearly full rather than in half, which keeps the file near the size of the data.
var appendMostly = map[string]bool{BucketHistory: true, brain.BucketIndex: true}

const appendFill = 0.95

// EnsureBucket creates the bucket name if it does not exist (a plugin's own bucket).
func (t *Tx) EnsureBucket(name string) error {
	if _, err := t.tx.CreateBucketIfNotExists([]byte(name)); err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

// OnCommit runs fn after the transaction commits (never if it rolls back).
func (t *Tx) OnCommit(fn func()) { t.tx.OnCommit(fn) }

// Put stores v as JSON under key.
func (t *Tx) Put(bucket string, key []byte, v any) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s entry: %w", bucket, err)
	}
	return b.Put(key, data)
}

// PutRaw stores raw bytes under key.
func (t *Tx) PutRaw(bucket string, key, val []byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return b.Put(key, val)
}

// Get decodes the JSON under key into v and reports whether it was there.
func (t *Tx) Get(bucket string, key []byte, v any) (bool, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return false, err
	}
	found, err := decode(b.Get(key), v)
	if err != nil {
		return true, fmt.Errorf("decode %s entry: %w", bucket, err)
	}
	return found, nil
}

// decode decodes the JSON data (nil: absent) into v and reports whether there was any.
func decode(data []byte, v any) (bool, error) {
	if data == nil {
		return false, nil
	}
	return true, json.Unmarshal(data, v)
}

// GetRaw returns a copy of the bytes under key (nil if absent).
func (t *Tx) GetRaw(bucket string, key []byte) ([]byte, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return nil, err
	}
	v := b.Get(key)
	if v == nil {
		return nil, nil
	}
	return bytes.Clone(v), nil
}

// Peek returns the bytes under key (nil if absent) without copying them: they are valid
// only until the transaction ends and must not be modified. It suits large values read
// once (memory's index segments).
func (t *Tx) Peek(bucket string, key []byte) ([]byte, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return nil, err
	}
	return b.Get(key), nil
}

// Delete removes key.
func (t *Tx) Delete(bucket string, key []byte) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	if b.Get(key) != nil {
		t.deleted++
	}
	return b.Delete(key)
}

// Scan calls fn for every key with the prefix, in key order. k and v are valid only during
// the call; fn must copy what it keeps. Returning brain.ErrStop ends the scan early
// without error.
func (t *Tx) Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	return t.ScanFrom(bucket, prefix, prefix, fn)
}

// ScanFrom is Scan starting at the first key at or after from (which should have the
// prefix).
func (t *Tx) ScanFrom(bucket string, prefix, from []byte, fn func(k, v []byte) error) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return stopped(scanFrom(b, prefix, from, fn))
}

// ScanReverse is Scan from the last key with the prefix backwards.
func (t *Tx) ScanReverse(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	b, err := t.bucket(bucket)
	if err != nil {
		return err
	}
	return stopped(scanReverse(b, prefix, fn))
}

// scanFrom calls fn for b's keys from the first at or after from while they have the
// prefix, and returns fn's first error as it is (brain.ErrStop too: a walk over several
// buckets stops on it).
func scanFrom(b *bolt.Bucket, prefix, from []byte, fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// scanReverse is scanFrom from the last key with the prefix backwards.
func scanReverse(b *bolt.Bucket, prefix []byte, fn func(k, v []byte) error) error {
	c := b.Cursor()
	end := prefixEnd(prefix)
	var k, v []byte
	if end == nil {
		k, v = c.Last()
	} else {
		if k, _ = c.Seek(end); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// stopped turns brain.ErrStop into the end of a walk.
func stopped(err error) error {
	if errors.Is(err, brain.ErrStop) {
		return nil
	}
	return err
}

// DeletePrefix removes every key with the prefix (blobs too) and returns how many.
func (t *Tx) DeletePrefix(bucket string, prefix []byte) (int, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return 0, err
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := deleteKey(b, k); err != nil {
			return 0, err
		}
	}
	t.deleted += len(keys)
	return len(keys), nil
}

// NextSeq returns the bucket's next sequence number.
func (t *Tx) NextSeq(bucket string) (uint64, error) {
	b, err := t.bucket(bucket)
	if err != nil {
		return 0, err
	}
	return b.NextSequence()
}

func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
