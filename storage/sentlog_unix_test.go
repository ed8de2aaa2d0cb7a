//go:build unix

package storage

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// sentRecord is the sent log's record of id.
func sentRecord(id uint64) []byte {
	rec := make([]byte, sentLogRecord)
	binary.BigEndian.PutUint64(rec, id)
	binary.BigEndian.PutUint64(rec[8:], ^id)
	return rec
}

// undelivered makes a store at path whose outbox holds one entry, not yet delivered,
// closes it and returns the entry's id.
func undelivered(t *testing.T, path string) uint64 {
	t.Helper()
	s := openAt(t, path, Options{})
	out, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{{Chat: 1, Text: "a"}}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out[0].ID
}

func pendingIDs(t *testing.T, s *Store) []uint64 {
	t.Helper()
	var ids []uint64
	for _, e := range pendingOutbox(t, s) {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestSentLogRefused: a sent log anima did not write as it writes one — not a regular
// file of its user that no one else may write — is not read: the undelivered entry it
// names stays in the outbox (reading it would drop the message). Open warns, naming the
// file and why, and moves it aside (a read-only Open leaves it); the next mark goes to a
// fresh log of its own, which a kill then replays.
func TestSentLogRefused(t *testing.T) {
	t.Parallel()
	plant := func(mode os.FileMode, uid int) func(*testing.T, string, uint64) {
		return func(t *testing.T, path string, id uint64) {
			if err := os.WriteFile(path, sentRecord(id), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			if uid >= 0 {
				if err := os.Chown(path, uid, -1); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, tc := range []struct {
		name     string
		plant    func(t *testing.T, path string, id uint64)
		root     bool
		readOnly bool
		reason   string
	}{
		{name: "writable by group", plant: plant(0o620, -1), reason: "writable by group or others"},
		{name: "writable by others", plant: plant(0o602, -1), reason: "writable by group or others"},
		{name: "writable by group, read-only open", plant: plant(0o660, -1), readOnly: true, reason: "writable by group or others"},
		{name: "another user's file", plant: plant(0o600, 4242), root: true, reason: "not owned by uid"},
		{name: "symbolic link", reason: "a symbolic link", plant: func(t *testing.T, path string, id uint64) {
			if err := os.WriteFile(path+".target", sentRecord(id), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path+".target", path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "FIFO", reason: "not a regular file", plant: func(t *testing.T, path string, _ uint64) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.root && os.Geteuid() != 0 {
				t.Skip("needs root")
			}
			path := filepath.Join(t.TempDir(), "anima.db")
			id := undelivered(t, path)
			logPath := path + sentLogSuffix
			tc.plant(t, logPath, id)
			logs := &braintest.Buffer{}
			s := openAt(t, path, Options{ReadOnly: tc.readOnly, SentDelay: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if got := pendingIDs(t, s); len(got) != 1 || got[0] != id {
				t.Errorf("pending after Open = %v, want [%d]: the refused log was read", got, id)
			}
			for _, want := range []string{"sent log refused", logPath, tc.reason} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, logs)
				}
			}
			aside, _ := filepath.Glob(logPath + ".bad-*")
			if _, err := os.Lstat(logPath); tc.readOnly != (err == nil) || tc.readOnly != (len(aside) == 0) {
				t.Errorf("after Open: the log's Lstat %v, moved aside to %v; want it moved aside unless read-only", err, aside)
			}
			if tc.readOnly {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			// The next mark, a kill, and Open replays the fresh log.
			if err := s.MarkSent(id); err != nil {
				t.Fatal(err)
			}
			s.crash(t)
			if fi, err := os.Lstat(logPath); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("the fresh sent log is %v (%v), want a regular 0600 file", fi, err)
			}
			s = openAt(t, path, Options{})
			defer s.Close()
			if got := pendingIDs(t, s); len(got) != 0 {
				t.Errorf("pending after a kill with the fresh log = %v, want none", got)
			}
		})
	}
}

// TestSentLogOversize: a sent log longer than sentLogMax (1 GiB, sparse) is read only
// for its last sentLogMax bytes, where the marks not yet committed are: Open allocates
// far less than the file, removes the entry the last record names, warns naming the
// file, and moves it aside. Not parallel: it measures the process's allocations.
func TestSentLogOversize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anima.db")
	id := undelivered(t, path)
	logPath := path + sentLogSuffix
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	if _, err := f.WriteAt(sentRecord(id), size-sentLogRecord); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	logs := &braintest.Buffer{}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := openAt(t, path, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	runtime.ReadMemStats(&after)
	defer s.Close()
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("Open of a store with a %d-byte sent log allocated %d bytes, want under 8 MiB", size, alloc)
	}
	if got := pendingIDs(t, s); len(got) != 0 {
		t.Errorf("pending after Open = %v, want none: the log's last record names the entry", got)
	}
	for _, want := range []string{"sent log longer than it can grow", logPath, "moved_to="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	if _, err := os.Lstat(logPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the oversize log is still in place after Open (%v)", err)
	}
	if aside, _ := filepath.Glob(logPath + ".bad-*"); len(aside) != 1 {
		t.Errorf("moved aside to %v, want one .bad- file", aside)
	}
}
