package storage

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestReadSentLogSkipsWhatDoesNotCheck: a power loss can leave zeros or garbage where
// records were to be, and a half record at the end; none of it names an entry.
func TestReadSentLogSkipsWhatDoesNotCheck(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db.sent")
	l := sentLog{path: path}
	for _, id := range []uint64{7, 9} {
		if err := l.append(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.close(false); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	tail := append(make([]byte, sentLogRecord), bytes.Repeat([]byte{0xA5}, sentLogRecord+5)...)
	if _, err := f.Write(tail); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ids, err := readSentLog(path)
	if err != nil || !slices.Equal(ids, []uint64{7, 9}) {
		t.Fatalf("readSentLog = %v, %v; want [7 9]", ids, err)
	}
	if ids, err := readSentLog(path + ".none"); err != nil || ids != nil {
		t.Fatalf("readSentLog of no file = %v, %v", ids, err)
	}
}

// TestSentLogStaysSmall: the log is cut once every id in it is committed and it has
// grown to a page, and Close removes it; a read-only Open after a kill sees its marks.
func TestSentLogStaysSmall(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s, err := Open(path, Options{SentDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		t.Helper()
		st, err := os.Stat(path + sentLogSuffix)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	largest := int64(0)
	for i := range sentLogTrim/sentLogRecord + 10 {
		out, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{{Chat: 1, Text: "x"}}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MarkSent(out[0].ID); err != nil {
			t.Fatal(err)
		}
		largest = max(largest, size())
		if i == 0 && size() != sentLogRecord {
			t.Fatalf("sent log after one mark: %d bytes, want %d", size(), sentLogRecord)
		}
	}
	if largest > sentLogTrim || size() >= sentLogTrim {
		t.Fatalf("sent log grew to %d bytes (now %d), want it cut at %d", largest, size(), sentLogTrim)
	}

	// A kill with a mark waiting: a read-only look sees the entry as sent, and leaves
	// the log for the next Open to replay.
	out, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{{Chat: 1, Text: "last"}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkSent(out[0].ID); err != nil {
		t.Fatal(err)
	}
	s.sentMu.Lock()
	s.sentTimer.Stop()
	err = errors.Join(s.log.close(false), s.db.Close())
	s.sentMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := ro.PendingOutbox(); err != nil || len(p) != 0 {
		t.Fatalf("read-only pending after a kill = %+v, %v; want none", p, err)
	}
	if err := ro.Close(); err != nil {
		t.Fatalf("close read-only: %v", err)
	}
	if size() == 0 {
		t.Fatal("a read-only Open emptied the sent log")
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.PendingOutbox(); err != nil || len(p) != 0 {
		t.Fatalf("pending after a kill = %+v, %v; want none", p, err)
	}
	out, err = s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{{Chat: 1, Text: "y"}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkSent(out[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + sentLogSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("sent log after Close: %v, want none", err)
	}
}
