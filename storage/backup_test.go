package storage_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/anima-bot/anima/storage"
)

// TestBackupWhileErasureOwedHoldsNoneOfIt: a backup taken after ForgetUser and before the
// owed compaction holds none of the forgotten words, though the store's file still does
// (in freed pages); the copy is a working store with the rest intact that owes no erasure.
func TestBackupWhileErasureOwedHoldsNoneOfIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := open(t, path)
	const marker = "SILVERKEY-4711"
	commitTurns(t, s, 7, 30, "my bank pin is "+marker)
	commitTurns(t, s, 8, 5, "someone else")
	if _, err := s.ForgetUser(7, nil); err != nil {
		t.Fatal(err)
	}
	if owed, err := s.ErasurePending(); err != nil || !owed {
		t.Fatalf("ErasurePending = %v, %v after ForgetUser; want true", owed, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte(marker)); n == 0 {
		t.Fatal("the store's file holds no forgotten word before compaction: the test proves nothing")
	}
	for _, sized := range []bool{false, true} {
		t.Run(fmt.Sprintf("sized=%v", sized), func(t *testing.T) {
			var buf bytes.Buffer
			write := s.WriteTo
			if sized {
				write = s.WriteSizedTo
			}
			if _, err := write(&buf); err != nil {
				t.Fatal(err)
			}
			copied := buf.Bytes()
			if n := bytes.Count(copied, []byte(marker)); n != 0 {
				t.Errorf("the backup holds the forgotten words %d times", n)
			}
			if sized {
				_, copied, _ = bytes.Cut(copied, []byte("\n"))
			}
			out := filepath.Join(t.TempDir(), "backup.db")
			if err := os.WriteFile(out, copied, 0o600); err != nil {
				t.Fatal(err)
			}
			b, err := storage.Open(out, storage.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("open the backup: %v", err)
			}
			defer b.Close()
			if h, err := b.History(8, 0); err != nil || len(h) != 10 {
				t.Errorf("backup: chat 8 has %d turns, %v; want 10", len(h), err)
			}
			if h, _ := b.History(7, 0); len(h) != 0 {
				t.Errorf("backup: the forgotten chat has %d turns", len(h))
			}
			if owed, err := b.ErasurePending(); err != nil || owed {
				t.Errorf("backup: ErasurePending = %v, %v; a copy of the live data owes nothing", owed, err)
			}
		})
	}
}

// BenchmarkBackup100k measures a backup of a store of 100,000 messages (50,000 exchanges
// of about 150 bytes per message, the store BenchmarkCompact100k compacts), with a user's
// 1,000 messages forgotten and not yet compacted away; MiB is the backup's size.
func BenchmarkBackup100k(b *testing.B) {
	s, path := open100k(b, func(c int) int64 { return int64(c + 1) })
	if _, err := s.ForgetUser(1, nil); err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "store-MiB")
	}
	var (
		n   int64
		err error
	)
	for b.Loop() {
		if n, err = s.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/(1<<20), "MiB")
}

// TestOpenRemovesCrashedBackupCopy: a backup's temporary copy, which a crash can leave
// beside the store with the live data in it, is removed by the next Open.
func TestOpenRemovesCrashedBackupCopy(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima [1].db") // glob characters in the name
	s := open(t, path)
	commitTurns(t, s, 7, 3, "kept")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	left := path + ".snapshot-123456"
	if err := os.WriteFile(left, []byte("a copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	open(t, path)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("a crashed backup's copy is left beside the store: %v", err)
	}
}
