package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestMarkSentRidesOnTheNextCommit: removing the last delivered outbox entry waits for
// the next commit, its id in the sent log meanwhile, so a kill before that commit repeats
// nothing and a power loss (which loses the log's unsynced write) at most that one
// message; an entry with others behind it is removed at once; Close and FlushSent commit
// what waits.
func TestMarkSentRidesOnTheNextCommit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "anima.db")
	open := func() *Store {
		t.Helper()
		s, err := Open(path, Options{SentDelay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	kill := func(s *Store) { // the process dies: no Close, nothing more committed
		t.Helper()
		s.sentMu.Lock()
		if s.sentTimer != nil {
			s.sentTimer.Stop()
		}
		err := s.log.close(false)
		s.sentMu.Unlock()
		if err := errors.Join(err, s.db.Close()); err != nil {
			t.Fatal(err)
		}
	}
	crash := func(s *Store) { // the power goes: what was not synced is lost, the sent log too
		t.Helper()
		kill(s)
		if err := os.Remove(path + sentLogSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	turn := func(s *Store, texts ...string) []brain.Outgoing {
		t.Helper()
		var msgs []brain.SendMessage
		for _, x := range texts {
			msgs = append(msgs, brain.SendMessage{Chat: 1, Text: x})
		}
		out, err := s.CommitTurn(Commit{Chat: 1, Outbox: msgs}, now)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	pending := func(s *Store) []string {
		t.Helper()
		out, err := s.PendingOutbox()
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, e := range out {
			texts = append(texts, e.Msg.Text)
		}
		return texts
	}
	markSent := func(s *Store, e brain.Outgoing) {
		t.Helper()
		if err := s.MarkSent(e.ID); err != nil {
			t.Fatal(err)
		}
	}

	// A reply sent, then a kill before any other commit: the sent log has its mark.
	s := open()
	k := turn(s, "k")
	markSent(s, k[0])
	kill(s)
	s = open()
	if got := pending(s); len(got) != 0 {
		t.Fatalf("after a kill right after the send: pending = %q, want none", got)
	}
	if _, err := os.Stat(path + sentLogSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the sent log outlived the Open that replayed it: %v", err)
	}
	kill(s)
	s = open()
	if got := pending(s); len(got) != 0 {
		t.Fatalf("the removal Open replayed was not committed: pending = %q, want none", got)
	}

	// A reply sent, then a power loss before any other commit: only it comes back.
	a := turn(s, "a")
	markSent(s, a[0])
	if got := pending(s); len(got) != 0 {
		t.Fatalf("pending after MarkSent = %q, want none", got)
	}
	crash(s)
	s = open()
	if got := pending(s); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after a power loss right after the send: pending = %q, want [a]", got)
	}

	// The next commit (a Record) carries the removal.
	markSent(s, a[0])
	if _, err := s.Record("telegram", []brain.Signal{{Type: brain.SignalUserMessage, Chat: 1, Text: "hi"}}, 5); err != nil {
		t.Fatal(err)
	}
	crash(s)
	s = open()
	if got := pending(s); len(got) != 0 {
		t.Fatalf("after a commit and a crash: pending = %q, want none", got)
	}

	// Two replies: the first is removed at once (the second is behind it), so a crash
	// after both were sent repeats only the second.
	bc := turn(s, "b", "c")
	markSent(s, bc[0])
	markSent(s, bc[1])
	crash(s)
	s = open()
	if got := pending(s); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after two sends and a crash: pending = %q, want [c]", got)
	}

	// FlushSent commits a waiting removal on its own; Close does too.
	markSent(s, bc[1])
	if err := s.FlushSent(); err != nil {
		t.Fatal(err)
	}
	d := turn(s, "d")
	crash(s)
	s = open()
	if got := pending(s); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("after FlushSent and a crash: pending = %q, want [d]", got)
	}
	markSent(s, d[0])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	if got := pending(s); len(got) != 0 {
		t.Fatalf("after Close: pending = %q, want none", got)
	}
}

// TestMarkSentWaitsAtMostSentDelay: a removal left waiting gets a commit of its own
// when Options.SentDelay has passed.
func TestMarkSentWaitsAtMostSentDelay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s, err := Open(path, Options{SentDelay: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var delay time.Duration
	var fire func()
	s.afterFunc = func(d time.Duration, f func()) *time.Timer {
		delay, fire = d, f
		return time.NewTimer(time.Hour)
	}
	out, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{{Chat: 1, Text: "a"}}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkSent(out[0].ID); err != nil {
		t.Fatal(err)
	}
	if fire == nil || delay != 3*time.Second {
		t.Fatalf("no flush scheduled after SentDelay (delay %v)", delay)
	}
	fire()
	if err := s.db.Close(); err != nil { // a crash after the flush
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out, err := s.PendingOutbox(); err != nil || len(out) != 0 {
		t.Fatalf("pending after the flush = %+v, %v", out, err)
	}
}

// TestRecordSentRidesOnTheNextCommit: sent message ids are seen at once and written by
// the store's next commit once a batch has gathered (fewer, by Close), not by commits of
// their own, trimmed to SentKeep per chat.
func TestRecordSentRidesOnTheNextCommit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s, err := Open(path, Options{SentDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.Space()
	for id := 1; id <= SentKeep+10; id++ {
		if err := s.RecordSent(7, id); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := s.Space(); after.PageWrites != before.PageWrites {
		t.Errorf("RecordSent wrote %d pages of its own", after.PageWrites-before.PageWrites)
	}
	for id, want := range map[int]bool{10: false, 11: true, SentKeep + 10: true} {
		if ok, err := s.Sent(7, id); err != nil || ok != want {
			t.Errorf("Sent(7, %d) before a commit = %v, %v; want %v", id, ok, err, want)
		}
	}
	if _, err := s.Record("telegram", []brain.Signal{{Type: brain.SignalUserMessage, Chat: 7, Text: "hi"}}, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Close(); err != nil { // a crash after that commit
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]bool{1: false, 10: false, 11: true, SentKeep + 10: true, SentKeep + 11: false} {
		if ok, err := s.Sent(7, id); err != nil || ok != want {
			t.Errorf("Sent(7, %d) after the commit = %v, %v; want %v", id, ok, err, want)
		}
	}
	// Fewer than a batch wait for Close.
	if err := s.RecordSent(9, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ok, err := s.Sent(9, 1); err != nil || !ok {
		t.Errorf("Sent(9, 1) after Close = %v, %v", ok, err)
	}
}

// TestSentIDsAreWrittenAChatAtATime: a commit writes the sent ids of a chat once
// sentBatch of them have gathered, and those of every chat once sentFlushAll wait in
// all; what a crash forgets is what had not been written.
func TestSentIDsAreWrittenAChatAtATime(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s, err := Open(path, Options{SentDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	commit := func() {
		t.Helper()
		if _, err := s.Record("telegram", []brain.Signal{{Type: brain.SignalUserMessage, Chat: 1, Text: "hi"}}, 0); err != nil {
			t.Fatal(err)
		}
	}
	stored := func(chat int64) int {
		t.Helper()
		var n int
		_ = s.View(func(tx *Tx) error {
			v, err := tx.Peek(BucketSent, brain.ID64(chat))
			ids, _ := decodeSent(v)
			n = len(ids)
			return err
		})
		return n
	}
	record := func(chat int64, n int) {
		t.Helper()
		for i := range n {
			if err := s.RecordSent(chat, 100+i); err != nil {
				t.Fatal(err)
			}
		}
	}
	record(1, sentBatch-1)
	record(2, 1)
	commit()
	if a, b := stored(1), stored(2); a != 0 || b != 0 {
		t.Fatalf("after a commit with no chat at a batch: stored %d and %d ids, want none", a, b)
	}
	record(1, 1)
	commit()
	if a, b := stored(1), stored(2); a != sentBatch || b != 0 {
		t.Fatalf("after chat 1 reached a batch: stored %d and %d ids, want %d and 0", a, b, sentBatch)
	}
	for chat := int64(10); chat < 10+sentFlushAll/(sentBatch-1)+1; chat++ {
		record(chat, sentBatch-1) // no chat reaches a batch; together they pass sentFlushAll
	}
	commit()
	if a, b := stored(2), stored(10); a != 1 || b != sentBatch-1 {
		t.Errorf("after %d ids waited in all: stored %d and %d ids, want every chat's", sentFlushAll, a, b)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
