package storage

import (
	"bytes"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
)

// TestBlobsAreWrittenAlone: a new blob does not copy the blob beside it (its bucket's
// root page stays where it was), and blobs read, replace and delete like values.
func TestBlobsAreWrittenAlone(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "anima.db"), Options{})
	defer s.Close()
	big := func(c byte) []byte { return bytes.Repeat([]byte{c}, 64<<10) }
	put := func(key, val []byte) {
		t.Helper()
		if err := s.Update(func(tx *Tx) error { return tx.PutBlob(brain.BucketIndex, key, val) }); err != nil {
			t.Fatal(err)
		}
	}
	root := func(key []byte) (pg uint64) {
		t.Helper()
		_ = s.db.View(func(tx *bolt.Tx) error {
			pg = uint64(tx.Bucket([]byte(brain.BucketIndex)).Bucket(key).Root())
			return nil
		})
		return pg
	}
	a, b := brain.Key(1, []byte{'g'}, brain.U64(1)), brain.Key(1, []byte{'g'}, brain.U64(2))
	put(a, big('a'))
	before := root(a)
	put(b, big('b'))
	if after := root(a); after != before {
		t.Errorf("writing the next blob moved the first from page %d to %d (it was copied)", before, after)
	}

	put(b, []byte("small now"))
	// A plain value written before blobs existed reads and deletes the same way.
	plain := brain.Key(1, []byte{'g'}, brain.U64(3))
	if err := s.Update(func(tx *Tx) error { return tx.PutRaw(brain.BucketIndex, plain, []byte("old")) }); err != nil {
		t.Fatal(err)
	}
	err := s.View(func(tx *Tx) error {
		for key, want := range map[string]string{string(a): string(big('a')), string(b): "small now", string(plain): "old"} {
			v, err := tx.PeekBlob(brain.BucketIndex, []byte(key))
			if err != nil || string(v) != want {
				t.Errorf("PeekBlob(%x) = %d bytes, %v; want %d bytes", key, len(v), err, len(want))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error {
		if err := tx.DeleteBlob(brain.BucketIndex, plain); err != nil {
			return err
		}
		if err := tx.DeleteBlob(brain.BucketIndex, brain.Key(9, []byte("absent"))); err != nil {
			return err
		}
		n, err := tx.DeletePrefix(brain.BucketIndex, brain.ID64(1))
		if n != 2 {
			t.Errorf("DeletePrefix removed %d keys, want the 2 blobs", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		return tx.Scan(brain.BucketIndex, brain.ID64(1), func(k, _ []byte) error {
			t.Errorf("key %x left after DeletePrefix", k)
			return nil
		})
	})
}
