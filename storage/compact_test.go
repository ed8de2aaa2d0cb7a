package storage_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// commitTurns stores n exchanges in chat, each user message carrying text.
func commitTurns(t testing.TB, s *storage.Store, chat int64, n int, text string) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		turns := []brain.Turn{
			{Role: "user", Text: fmt.Sprintf("%s number %d", text, i), At: at, User: chat},
			{Role: "assistant", Text: fmt.Sprintf("answer %d", i), At: at},
		}
		if _, err := s.CommitTurn(storage.Commit{Chat: chat, Turns: turns}, at); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCompactLeavesNoTraceOfForgottenData(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	const marker = "zanzibar-marker"
	commitTurns(t, s, 7, 30, marker)
	commitTurns(t, s, 8, 5, "someone else")
	refused := brain.SendMessage{Chat: 7, Text: "an answer quoting " + marker}
	if _, err := s.Bury(brain.DeadLetter{Kind: brain.DeadUndeliverable, Chat: 7, User: 7, At: time.Now(), Message: &refused}); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(7); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte(marker)); n == 0 {
		t.Fatal("the forgotten words are not in the file even before compaction: the test proves nothing")
	}

	rep, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compacted %d → %d bytes in %v", rep.Before, rep.After, rep.Took)
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte(marker)); n != 0 {
		t.Errorf("the file still holds the forgotten marker %d times after Compact", n)
	}
	var backup bytes.Buffer
	if _, err := s.WriteTo(&backup); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(backup.Bytes(), []byte(marker)); n != 0 {
		t.Errorf("a backup holds the forgotten marker %d times", n)
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
	// The rest is intact, and sequences go on where they were.
	h, err := s.History(8, 0)
	if err != nil || len(h) != 10 {
		t.Fatalf("history of the other chat = %d turns, %v", len(h), err)
	}
	last := h[len(h)-1].Seq
	commitTurns(t, s, 8, 1, "after")
	h, _ = s.History(8, 1)
	if h[0].Seq <= last {
		t.Errorf("history sequence restarted: %d after %d", h[0].Seq, last)
	}
	// And it survives a reopen.
	_ = s.Close()
	s = open(t, path)
	if h, _ := s.History(8, 0); len(h) != 12 {
		t.Errorf("after reopen: %d turns, want 12", len(h))
	}
}

// TestCompactWhileWriting: transactions that arrive during a compaction wait for it and
// then succeed; none is lost.
func TestCompactWhileWriting(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	// What is checked is that no transaction fails and nothing is lost, not how long
	// Compact waits for the readers: on a loaded machine four busy writers kept it from
	// the lock past the default 2 s (ErrBusy, a flaky failure).
	s := openWith(t, path, storage.Options{CompactWait: time.Minute})
	commitTurns(t, s, 1, 200, "filler")
	const writers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.CommitTurn(storage.Commit{Chat: int64(100 + w), Turns: []brain.Turn{{Role: "user", Text: fmt.Sprint(i)}}}, time.Now()); err != nil {
					errs <- err
				}
				if _, err := s.History(int64(100+w), 1); err != nil {
					errs <- err
				}
			}
		})
	}
	for range 3 {
		if _, err := s.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a transaction failed during compaction: %v", err)
	}
	for w := range writers {
		if h, _ := s.History(int64(100+w), 0); len(h) != each {
			t.Errorf("writer %d: %d turns, want %d", w, len(h), each)
		}
	}
}

func TestCompactRefusesReadOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	_ = open(t, path).Close()
	ro := openWith(t, path, storage.Options{ReadOnly: true})
	if _, err := ro.Compact(); err == nil {
		t.Error("a read-only store compacted")
	}
}

// open100k opens a store in b's temporary directory and fills it with 100,000 messages
// (50,000 exchanges of about 150 bytes per message) in 100 chats, chat c+1's user messages
// from user(c). It returns the store and its path.
func open100k(b *testing.B, user func(c int) int64) (*storage.Store, string) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "anima.db")
	s := openWith(b, path, storage.Options{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const chats, perCommit = 100, 50
	text := "a message of the ordinary length people send to a companion, with a few words more to make it realistic"
	for c := range chats {
		for i := 0; i < 100_000/chats; i += perCommit {
			var turns []brain.Turn
			for j := range perCommit / 2 {
				turns = append(turns, brain.Turn{Role: "user", Text: fmt.Sprintf("%s %d", text, i+j), At: at, User: user(c)},
					brain.Turn{Role: "assistant", Text: fmt.Sprintf("%s %d", text, i+j), At: at})
			}
			if _, err := s.CommitTurn(storage.Commit{Chat: int64(c + 1), Turns: turns}, at); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s, path
}

// BenchmarkCompact100k measures a compaction of a store of 100,000 messages (50,000
// exchanges of about 150 bytes per message).
func BenchmarkCompact100k(b *testing.B) {
	s, _ := open100k(b, func(c int) int64 { return int64(c) })
	for b.Loop() {
		rep, err := s.Compact()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.After)/(1<<20), "MiB")
	}
}

// TestFreedPagesAreReused: forgetting a chat frees its pages, and writing as much again
// reuses them instead of growing the file.
func TestFreedPagesAreReused(t *testing.T) {
	t.Parallel()
	// The point is page reuse, not durability: commits skip the fsync.
	s := openWith(t, filepath.Join(t.TempDir(), "anima.db"), storage.Options{NoSync: true})
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fill := func(chat int64) {
		t.Helper()
		for i := range 300 {
			turn := brain.Turn{Role: "user", Text: strings.Repeat("words of a long message ", 12) + string(rune('a'+i%26)), At: now}
			if _, err := s.CommitTurn(storage.Commit{Chat: chat, Turns: []brain.Turn{turn, turn}}, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill(1)
	fill(2)
	full, err := s.Space()
	if err != nil {
		t.Fatal(err)
	}
	if full.FileBytes <= 0 || full.LiveBytes() > full.FileBytes || full.PageSize <= 0 || full.PageWrites <= 0 {
		t.Fatalf("space = %+v", full)
	}
	if err := s.Forget(1); err != nil {
		t.Fatal(err)
	}
	freed, _ := s.Space()
	if freed.LiveBytes() >= full.LiveBytes() {
		t.Errorf("live %d after forget, want below %d", freed.LiveBytes(), full.LiveBytes())
	}
	fill(3)
	again, _ := s.Space()
	if again.FileBytes > full.FileBytes+full.FileBytes/10 {
		t.Errorf("file grew from %d to %d bytes re-adding what was forgotten", full.FileBytes, again.FileBytes)
	}
}

// TestErasurePendingUntilCompacted: a ForgetUser that deletes something records that an
// erasure is owed, in the same commit; one that finds nothing records nothing; the
// compacted file no longer owes it, and a reopen still knows what was owed.
func TestErasurePendingUntilCompacted(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	pending := func(want bool) {
		t.Helper()
		got, err := s.ErasurePending()
		if err != nil || got != want {
			t.Fatalf("ErasurePending = %v, %v; want %v", got, err, want)
		}
	}
	pending(false)
	rep, err := s.ForgetUser(42, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Erased {
		t.Error("a user with nothing stored: the report says something was erased")
	}
	pending(false)

	commitTurns(t, s, 7, 3, "to forget")
	if rep, err = s.ForgetUser(7, nil); err != nil {
		t.Fatal(err)
	}
	if !rep.Erased {
		t.Error("the user's chat was deleted, but the report says nothing was erased")
	}
	pending(true)
	// A crash now: the next start still owes the erasure.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	pending(true)
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	pending(false)
}

// TestOpenRemovesCrashedCompaction: a SIGKILL during a compaction leaves <path>.compact
// beside the store; the next Open removes it and the store is whole.
func TestOpenRemovesCrashedCompaction(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commitTurns(t, s, 7, 3, "kept")
	_ = s.Close()
	if err := os.WriteFile(path+".compact", bytes.Repeat([]byte("half a copy"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the crashed compaction's copy is still there: %v", err)
	}
	if h, err := s.History(7, 0); err != nil || len(h) != 6 {
		t.Errorf("history = %d turns, %v; want 6", len(h), err)
	}
}

// TestCompactedFileHasNoSlack: a compacted file is no larger than its pages (plus one
// per bucket): bbolt grows a file past 16 MiB by 16 MiB at a time, which made a
// compaction of a 50.4 MB store write 55.1 MB.
func TestCompactedFileHasNoSlack(t *testing.T) {
	t.Parallel()
	// The point is the file's size, not durability: commits skip the fsync.
	s := openWith(t, filepath.Join(t.TempDir(), "anima.db"), storage.Options{NoSync: true})
	value := strings.Repeat("x", 100<<10)
	for i := range 10 { // 20 MiB, past bbolt's 16 MiB AllocSize
		if err := s.Update(func(tx *storage.Tx) error {
			for j := range 20 {
				if err := tx.Put(storage.BucketState, brain.ID64(int64(i*100+j)), value); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	pages, err := s.WriteTo(io.Discard) // the high-water mark of the compacted file
	if err != nil {
		t.Fatal(err)
	}
	slack := int64(20) * int64(os.Getpagesize()) // a page for each of the store's buckets, and a few more
	t.Logf("compacted %d → %d bytes; its pages take %d", rep.Before, rep.After, pages)
	if rep.After > pages+slack {
		t.Errorf("the compacted file is %d bytes, %d more than its pages (allowed: %d)", rep.After, rep.After-pages, slack)
	}
	if rep.After > rep.Before+slack {
		t.Errorf("compaction grew the file: %d → %d bytes", rep.Before, rep.After)
	}
}

// TestCompactDoesNotQueueBehindAReader: while a long read holds the store, Compact gives
// up after its bounded wait (storage.ErrBusy) instead of queueing for the write lock,
// and transactions that start meanwhile do not wait for it. (They are reads: a write
// that grows the file waits for bbolt's remap, which every open read holds off — why a
// backup must not stream from a read transaction.)
func TestCompactDoesNotQueueBehindAReader(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := openWith(t, path, storage.Options{CompactWait: 50 * time.Millisecond})
	commitTurns(t, s, 7, 3, "some")
	reading, release := make(chan struct{}), make(chan struct{})
	readDone := make(chan error, 1)
	go func() {
		readDone <- s.View(func(*storage.Tx) error {
			close(reading)
			<-release
			return nil
		})
	}()
	<-reading
	compacted := make(chan error, 1)
	go func() {
		_, err := s.Compact()
		compacted <- err
	}()
	// Transactions go on while the reader reads and the compaction waits: behind a
	// queued write lock they would hang here until the reader finished.
	for range 20 {
		if _, err := s.History(7, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-compacted; !errors.Is(err, storage.ErrBusy) {
		t.Errorf("Compact behind a long reader = %v, want ErrBusy", err)
	}
	close(release)
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(); err != nil {
		t.Errorf("Compact once the reader is done: %v", err)
	}
}

// TestSlowBackupReaderHoldsNothing: a backup whose reader stops reading holds no lock:
// writes and a compaction go ahead, and the backup, read at last, is the store as it
// was when it began.
func TestSlowBackupReaderHoldsNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := openWith(t, path, storage.Options{CompactWait: 50 * time.Millisecond})
	commitTurns(t, s, 7, 30, "before the backup")
	pr, pw := io.Pipe()
	streamed := make(chan error, 1)
	go func() {
		_, err := s.WriteSizedTo(pw)
		pw.CloseWithError(err)
		streamed <- err
	}()
	r := &headReader{r: pr}
	if _, err := r.line(); err != nil { // the size line: the copy is taken
		t.Fatal(err)
	}
	// The reader now stalls; the store must not.
	commitTurns(t, s, 8, 5, "during the backup")
	if _, err := s.Compact(); err != nil {
		t.Fatalf("Compact during a stalled backup: %v", err)
	}
	out := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, pr); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := <-streamed; err != nil {
		t.Fatal(err)
	}
	b := openWith(t, out, storage.Options{ReadOnly: true})
	if h, _ := b.History(7, 0); len(h) != 60 {
		t.Errorf("backup: chat 7 has %d turns, want 60", len(h))
	}
	if h, _ := b.History(8, 0); len(h) != 0 {
		t.Errorf("backup: chat 8 has %d turns written after it began, want 0", len(h))
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the store's directory holds %v, want the store alone", names)
	}
}

// headReader reads a line byte by byte, leaving the rest of r unread.
type headReader struct{ r io.Reader }

func (h *headReader) line() (string, error) {
	var b []byte
	one := make([]byte, 1)
	for {
		if _, err := io.ReadFull(h.r, one); err != nil {
			return "", err
		}
		if one[0] == '\n' {
			return string(b), nil
		}
		b = append(b, one[0])
	}
}

// TestBackupWhileErasureOwedHoldsNoneOfIt: a backup taken after ForgetUser and before the
// owed compaction holds none of the forgotten words, though the store's file still does
// (in freed pages); the copy is a working store with the rest intact that owes no erasure.
func TestBackupWhileErasureOwedHoldsNoneOfIt(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
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
			b := openWith(t, out, storage.Options{ReadOnly: true})
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

// heapRetained is the memory the heap holds from the system: its objects, the unused
// room in its spans, and the spans it freed but has not given back.
func heapRetained() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	var n uint64
	for _, m := range s {
		n += m.Value.Uint64()
	}
	return n
}

// TestCopyHoldsLittleHeap: a compaction or a backup of a 40 MiB store holds little of it
// in the heap while it copies, and gives back what it held once it is done. bbolt keeps a write
// transaction's pages in the heap until it commits, and a copy committed every 64 MiB
// held them all: a backup of a 112 MiB store left anima at 121 MB of RssAnon (idle:
// 4.4 MB) for minutes. Not parallel: the figures are the whole process's.
func TestCopyHoldsLittleHeap(t *testing.T) {
	s := openWith(t, filepath.Join(t.TempDir(), "anima.db"), storage.Options{NoSync: true})
	small, big := bytes.Repeat([]byte("s"), 200), bytes.Repeat([]byte("b"), 100<<10)
	for i := range 10 { // 20 MiB of small values on leaf pages, 20 MiB of large ones on their own
		if err := s.Update(func(tx *storage.Tx) error {
			for j := range 10_000 {
				if err := tx.PutRaw(storage.BucketHistory, brain.ID64(int64(i*10_000+j)), small); err != nil {
					return err
				}
			}
			for j := range 20 {
				if err := tx.PutRaw(storage.BucketState, brain.ID64(int64(i*20+j)), big); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	const (
		// A copy committed every 64 MiB grew it by 52 MiB, and left it so; one every
		// 256 KiB by 4–8 MiB (the collector's pace), and it gives it back.
		peakBound  = 16 << 20
		afterBound = 2 << 20
	)
	for _, c := range []struct {
		name string
		copy func() error
	}{
		{"compact", func() error { _, err := s.Compact(); return err }},
		{"backup", func() error { _, err := s.WriteTo(io.Discard); return err }},
	} {
		runtime.GC()
		debug.FreeOSMemory()
		before := heapRetained()
		var peak atomic.Uint64
		done, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				peak.Store(max(peak.Load(), heapRetained()))
				select {
				case <-done:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		err := c.copy()
		after := heapRetained() // read at once: no collection of the test's
		close(done)
		<-sampled
		if err != nil {
			t.Fatal(err)
		}
		grew := func(n uint64) float64 { return (float64(n) - float64(before)) / (1 << 20) }
		t.Logf("%s: heap retained %.1f MiB before, peak +%.1f MiB, after +%.1f MiB", c.name, float64(before)/(1<<20), grew(peak.Load()), grew(after))
		if peak.Load() > before+peakBound {
			t.Errorf("%s: the heap grew by %.1f MiB while it copied (allowed: %d MiB)", c.name, grew(peak.Load()), peakBound>>20)
		}
		if after > before+afterBound {
			t.Errorf("%s: the heap holds %.1f MiB more after the copy than before (allowed: %d MiB)", c.name, grew(after), afterBound>>20)
		}
	}
}
