package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// compactTxSize is how many bytes bbolt.Compact copies per transaction. A write
// transaction keeps every page it writes in the heap until it commits, so this bounds the
// heap a copy holds: at 64 MiB a backup of a 112 MiB store left anima at 121 MB of RssAnon
// (idle: 4.4 MB), and a compaction after /forget peaked at 273 MB. Committing every MiB
// costs no time measurably (BenchmarkBackup100k, BenchmarkCompact100k) and the heap grows
// by 5–8 MiB while copying (TestCopyHoldsLittleHeap); the copy is not synced until it is
// whole (NoSync, NoGrowSync). Every commit leaves a few freed pages behind in the copy:
// at 256 KiB a commit they came to 0.4–1.2 MiB of a 25 MiB file (TestCompactedFileHasNoSlack
// allows 80 KiB), at 1 MiB to none past the allowance; at 4 MiB the heap grew by 16 MiB.
const compactTxSize = 1 << 20

// ErrBusy is returned by Compact when a reader held the store for longer than it may
// wait: nothing changed, and the caller tries again later.
var ErrBusy = errors.New("store busy: a long read holds it")

// compactWait bounds how long Compact waits for the store's readers to finish. It never
// queues behind them: a waiting writer lock would hold up every new transaction for as
// long as the slowest reader reads.
const compactWait = 2 * time.Second

// CompactReport says what a compaction did.
type CompactReport struct {
	Before, After int64         // file sizes in bytes
	Took          time.Duration // the time transactions waited for it
}

// Compact rewrites the store into a fresh file and swaps it in, so that nothing deleted —
// a forgotten user's messages, consumed inbox entries — survives anywhere in the file
// (bbolt leaves freed pages as they were, and a hot backup copies them). Transactions
// wait for it (they do not fail): it holds the store's lock for writing while it copies
// the live data into <path>.compact, syncs it, closes the store, renames the copy over the
// file, syncs the directory and reopens. A crash at any point leaves either the old file
// or the complete new one at path. On error the old file stays in use.
//
// It waits at most compactWait for the readers of the moment to finish, and returns
// ErrBusy if they do not; meanwhile new transactions do not wait for it.
func (s *Store) Compact() (CompactReport, error) {
	if !s.lockWithin(s.compactWait) {
		return CompactReport{}, fmt.Errorf("compact store %s: %w", s.path, ErrBusy)
	}
	defer debug.FreeOSMemory() // after the unlock below: the copy's garbage goes back at once
	defer s.mu.Unlock()
	began := time.Now()
	var rep CompactReport
	if s.db.IsReadOnly() {
		return rep, fmt.Errorf("compact store %s: opened read-only", s.path)
	}
	if fi, err := os.Stat(s.path); err == nil {
		rep.Before = fi.Size()
	}
	tmp := s.path + ".compact"
	if err := writeCompact(s.db, tmp); err != nil {
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("compact store %s: %w", s.path, err)
	}
	if err := s.db.Close(); err != nil {
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("compact store %s: close: %w", s.path, errors.Join(err, s.reopen()))
	}
	if err := os.Rename(tmp, s.path); err != nil {
		_ = os.Remove(tmp)
		return rep, fmt.Errorf("compact store %s: %w", s.path, errors.Join(err, s.reopen()))
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return rep, fmt.Errorf("compact store %s: %w", s.path, errors.Join(err, s.reopen()))
	}
	if err := s.reopen(); err != nil {
		return rep, fmt.Errorf("compact store %s: %w", s.path, err)
	}
	if fi, err := os.Stat(s.path); err == nil {
		rep.After = fi.Size()
	}
	rep.Took = time.Since(began)
	return rep, nil
}

// lockWithin takes s.mu for writing if it can within wait, trying now and then between
// readers rather than queueing behind them (a queued Lock blocks every new RLock).
func (s *Store) lockWithin(wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		if s.mu.TryLock() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}

// writeCompact copies the live data of src into a new file at path, with the pending
// erasure mark cleared, and syncs it.
func writeCompact(src *bolt.DB, path string) error {
	_ = os.Remove(path) // left by a crashed compaction
	// Mapping the copy as large as the source from the start spares the remaps of a
	// growing file, each of which copied every node written so far out of the old map
	// (a third of a backup's CPU time at 100,000 messages).
	var mmapSize int
	if fi, err := os.Stat(src.Path()); err == nil {
		mmapSize = int(fi.Size())
	}
	dst, err := bolt.Open(path, 0o600, &bolt.Options{
		// The copy's freelist is written, so the first Open of it reads it rather than
		// walking the file (see Open). Nothing is synced until the copy is whole
		// (dst.Sync below): NoGrowSync spares each of its many commits the fsync (and
		// truncate) of growing the file, which grows by its writes instead.
		Timeout: time.Second, NoSync: true, NoGrowSync: true, FreelistType: bolt.FreelistMapType, InitialMmapSize: mmapSize,
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	// bbolt grows a file past 16 MiB (its AllocSize) 16 MiB at a time, so a copy of a
	// 50 MB store ended up to 16 MiB longer than its data: 50.4 → 55.1 MB. Growing it a
	// page at a time keeps it at the size of its pages.
	dst.AllocSize = os.Getpagesize()
	if err := bolt.Compact(dst, src, compactTxSize); err != nil {
		_ = dst.Close()
		return fmt.Errorf("copy into %s: %w", path, err)
	}
	if err := clearErasure(dst); err != nil {
		_ = dst.Close()
		return fmt.Errorf("clear the pending erasure in %s: %w", path, err)
	}
	if err := dst.Sync(); err != nil {
		_ = dst.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// reopen opens the file at s.path again as the store's database. The caller holds s.mu.
func (s *Store) reopen() error {
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{
		Timeout: 5 * time.Second, NoFreelistSync: s.freelistAtClose, FreelistType: bolt.FreelistMapType, NoSync: s.noSync,
	})
	if err != nil {
		return fmt.Errorf("reopen %s: %w", s.path, err)
	}
	s.db = db
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
