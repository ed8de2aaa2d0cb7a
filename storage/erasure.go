package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// erasureKey, in the meta bucket, is set while data deleted on a user's request may still
// be in the file's freed pages: ForgetUser sets it in the commit that deletes, and Compact
// clears it in the copy that replaces the file. A crash before the compaction leaves it
// set, so the next start knows the erasure is still owed.
var erasureKey = []byte("erasure_pending")

// MarkErasure records in tx that deleted data must leave the file (ErasurePending).
func (t *Tx) MarkErasure() error {
	b, err := t.bucket(BucketMeta)
	if err != nil {
		return err
	}
	return b.Put(erasureKey, []byte{1})
}

// ErasurePending reports whether data was deleted on request since the last compaction,
// so the file may still hold it.
func (s *Store) ErasurePending() (bool, error) {
	var pending bool
	err := s.View(func(tx *Tx) error {
		b, err := tx.bucket(BucketMeta)
		if err != nil {
			return err
		}
		pending = b.Get(erasureKey) != nil
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("read pending erasure: %w", err)
	}
	return pending, nil
}

// clearErasure removes the pending mark from a compacted copy.
func clearErasure(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(BucketMeta)); b != nil {
			return b.Delete(erasureKey)
		}
		return nil
	})
}

// Deleted is how many keys this transaction has deleted so far: a caller that deletes
// through other code (a plugin's Forget, say) marks an erasure when it is not zero.
func (t *Tx) Deleted() int { return t.deleted }
