package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Space describes how much of the store's file holds data.
type Space struct {
	// FileBytes is the size of the file's data area (its high-water mark of pages).
	FileBytes int64
	// FreeBytes is the size of the pages free for reuse (or freed by a transaction still
	// being read).
	FreeBytes int64
	// PageSize is the file's page size.
	PageSize int
	// PageWrites is how many page writes commits have made since the store was opened.
	PageWrites int64
}

// LiveBytes is the part of the file that holds data.
func (s Space) LiveBytes() int64 { return s.FileBytes - s.FreeBytes }

// Space reports the store's file and free sizes.
func (s *Store) Space() (Space, error) {
	var sp Space
	s.mu.RLock()
	defer s.mu.RUnlock()
	err := s.db.View(func(tx *bolt.Tx) error {
		sp.FileBytes = tx.Size()
		return nil
	})
	if err != nil {
		return Space{}, fmt.Errorf("store space: %w", err)
	}
	st := s.db.Stats()
	sp.PageSize = s.db.Info().PageSize
	sp.FreeBytes = int64(st.FreePageN+st.PendingPageN) * int64(sp.PageSize)
	sp.PageWrites = st.TxStats.GetWrite()
	return sp, nil
}
