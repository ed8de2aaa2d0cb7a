package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
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

// snapshot writes a consistent copy of the store's live data to a temporary file in its
// directory, unlinked once written (Open removes one a crash left), and returns it open.
//
// The copy is bbolt.Compact's, not bbolt's page-for-page Tx.WriteTo: a page copy carries
// the freed pages too, which hold what was deleted — a forgotten user's words, until the
// owed compaction (ErasurePending) rewrites the store — and a backup is never compacted
// afterwards. A copy of the live data owes no erasure, so its mark is cleared. It costs
// more, once per backup: on the 100,000-message store of BenchmarkBackup100k (22 MiB,
// a user's 1,000 messages forgotten) the page copy took 0.09 s and wrote 21.97 MiB, the
// live copy 0.87 s and 20.59 MiB, holding for it only what the page copy held, the
// store's read lock (a compaction waits for it; transactions do not). The copy holds
// little of the store in the heap (compactTxSize), and its garbage goes back to the
// system as soon as it is written, rather than when the next collections come to it.
func (s *Store) snapshot() (*os.File, int64, error) {
	f, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+snapshotInfix+"*")
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	s.mu.RLock()
	err = writeCompact(s.db, name)
	s.mu.RUnlock()
	debug.FreeOSMemory() // once the store's readers are free to go on
	if err == nil {
		f, err = os.Open(name)
	}
	if rerr := os.Remove(name); err == nil && rerr != nil {
		_ = f.Close()
		err = rerr
	}
	if err != nil {
		_ = os.Remove(name)
		return nil, 0, fmt.Errorf("snapshot into %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	return f, fi.Size(), nil
}

// snapshotInfix follows the store's file name in a backup's temporary copy.
const snapshotInfix = ".snapshot-"

// removeSnapshots removes the temporary copies of backups a crash left beside the store
// at path.
func removeSnapshots(path string) error {
	left, err := filepath.Glob(globEscape(path) + snapshotInfix + "*")
	if err != nil {
		return err
	}
	for _, name := range left {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// globEscape escapes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
