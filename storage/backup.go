package storage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// WriteTo writes a consistent copy of the whole store to w (a hot backup).
func (s *Store) WriteTo(w io.Writer) (int64, error) { return s.writeTo(w, false) }

// WriteSizedTo writes a consistent copy of the store to w, preceded by its size in bytes
// as a decimal line, so a reader can tell a complete copy from a cut-off one.
func (s *Store) WriteSizedTo(w io.Writer) (int64, error) { return s.writeTo(w, true) }

// writeTo copies the store into an unlinked temporary file beside it, which takes as
// long as the disk needs, and only then streams that file to w, holding nothing: a
// reader of w that reads slowly makes no transaction, compaction or growth of the file
// wait (a read transaction held for the stream would keep the store's lock and bbolt's
// remap lock the whole time).
func (s *Store) writeTo(w io.Writer, sized bool) (int64, error) {
	snap, size, err := s.snapshot()
	if err != nil {
		return 0, fmt.Errorf("backup store: %w", err)
	}
	defer snap.Close()
	if sized {
		if _, err := fmt.Fprintf(w, "%d\n", size); err != nil {
			return 0, fmt.Errorf("backup store: %w", err)
		}
	}
	n, err := io.Copy(w, io.NewSectionReader(snap, 0, size))
	if err != nil {
		return n, fmt.Errorf("backup store: %w", err)
	}
	return n, nil
}

// snapshot writes a consistent copy of the store to a temporary file in its directory,
// unlinked at once (it is gone when closed, whatever happens), and returns it open.
func (s *Store) snapshot() (*os.File, int64, error) {
	f, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".snapshot-*")
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	var size int64
	s.mu.RLock()
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		size, err = tx.WriteTo(f)
		return err
	})
	s.mu.RUnlock()
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("snapshot into %s: %w", f.Name(), err)
	}
	return f, size, nil
}
