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

// TestMarkSentRidesOnTheNextCommit: removing the last delivered outbox entry waits for
// the next commit, its id in the sent log meanwhile, so a kill before that commit repeats
// nothing and a power loss (which loses the log's unsynced write) at most that one
// message; an entry with others behind it is removed at once; Close and FlushSent commit
// what waits.
func TestMarkSentRidesOnTheNextCommit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "anima.db")
	powerLoss := func(s *Store) { // the power goes: what was not synced is lost, the sent log too
		t.Helper()
		s.crash(t)
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
		var texts []string
		for _, e := range pendingOutbox(t, s) {
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
	s := openDelayed(t, path)
	k := turn(s, "k")
	markSent(s, k[0])
	s.crash(t)
	s = openDelayed(t, path)
	if got := pending(s); len(got) != 0 {
		t.Fatalf("after a kill right after the send: pending = %q, want none", got)
	}
	if _, err := os.Stat(path + sentLogSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the sent log outlived the Open that replayed it: %v", err)
	}
	s.crash(t)
	s = openDelayed(t, path)
	if got := pending(s); len(got) != 0 {
		t.Fatalf("the removal Open replayed was not committed: pending = %q, want none", got)
	}

	// A reply sent, then a power loss before any other commit: only it comes back.
	a := turn(s, "a")
	markSent(s, a[0])
	if got := pending(s); len(got) != 0 {
		t.Fatalf("pending after MarkSent = %q, want none", got)
	}
	powerLoss(s)
	s = openDelayed(t, path)
	if got := pending(s); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after a power loss right after the send: pending = %q, want [a]", got)
	}

	// The next commit (a Record) carries the removal.
	markSent(s, a[0])
	if _, err := s.Record("telegram", []brain.Signal{{Type: brain.SignalUserMessage, Chat: 1, Text: "hi"}}, 5); err != nil {
		t.Fatal(err)
	}
	powerLoss(s)
	s = openDelayed(t, path)
	if got := pending(s); len(got) != 0 {
		t.Fatalf("after a commit and a crash: pending = %q, want none", got)
	}

	// Two replies: the first is removed at once (the second is behind it), so a crash
	// after both were sent repeats only the second.
	bc := turn(s, "b", "c")
	markSent(s, bc[0])
	markSent(s, bc[1])
	powerLoss(s)
	s = openDelayed(t, path)
	if got := pending(s); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after two sends and a crash: pending = %q, want [c]", got)
	}

	// FlushSent commits a waiting removal on its own; Close does too.
	markSent(s, bc[1])
	if err := s.FlushSent(); err != nil {
		t.Fatal(err)
	}
	d := turn(s, "d")
	powerLoss(s)
	s = openDelayed(t, path)
	if got := pending(s); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("after FlushSent and a crash: pending = %q, want [d]", got)
	}
	markSent(s, d[0])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDelayed(t, path)
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
	s := openAt(t, path, Options{SentDelay: 3 * time.Second})
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
	s.crash(t) // a crash after the flush
	s = openAt(t, path, Options{})
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
	s := openDelayed(t, path)
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
	s.crash(t) // a crash after that commit
	s = openAt(t, path, Options{})
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
	s = openAt(t, path, Options{})
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
	s := openDelayed(t, path)
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

// openAt opens the store at path with opts; the test closes it, or ends it with crash.
func openAt(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return s
}

// pendingOutbox is s's PendingOutbox, failing the test on an error.
func pendingOutbox(t testing.TB, s *Store) []brain.Outgoing {
	t.Helper()
	out, err := s.PendingOutbox()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// openDelayed opens the store at path with a SentDelay of an hour: a delivered entry's
// removal waits for the next commit (or FlushSent, or Close) and no timer commits it.
func openDelayed(t *testing.T, path string) *Store {
	t.Helper()
	return openAt(t, path, Options{SentDelay: time.Hour})
}

// crash ends s as a killed process would: no Close, nothing more committed; the sent
// log's file is closed as the kernel closes a dead process's files, and left in place.
func (s *Store) crash(t *testing.T) {
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
	ids, whole, err := readSentLog(path)
	if err != nil || !whole || !slices.Equal(ids, []uint64{7, 9}) {
		t.Fatalf("readSentLog = %v, %v, %v; want [7 9], whole", ids, whole, err)
	}
	if ids, _, err := readSentLog(path + ".none"); err != nil || ids != nil {
		t.Fatalf("readSentLog of no file = %v, %v", ids, err)
	}
}

// TestSentLogStaysSmall: the log is cut once every id in it is committed and it has
// grown to a page, and Close removes it; a read-only Open after a kill sees its marks.
func TestSentLogStaysSmall(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := openDelayed(t, path)
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
	s.crash(t)
	ro := openAt(t, path, Options{ReadOnly: true})
	if p, err := ro.PendingOutbox(); err != nil || len(p) != 0 {
		t.Fatalf("read-only pending after a kill = %+v, %v; want none", p, err)
	}
	if err := ro.Close(); err != nil {
		t.Fatalf("close read-only: %v", err)
	}
	if size() == 0 {
		t.Fatal("a read-only Open emptied the sent log")
	}

	s = openAt(t, path, Options{})
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

// TestVoiceBlob: a spoken entry's audio is written with the turn, survives a crash (the
// process dies without Close) beside its entry, and goes when the entry is delivered —
// at once with others behind it, or with the next commit when it was the last — or when
// its chat is forgotten.
func TestVoiceBlob(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "anima.db")
	audio := func(n byte) []byte { return bytes.Repeat([]byte{n}, 3000) } // a blob over a quarter page
	spoken := func(chat int64, text string, n byte) brain.SendMessage {
		return brain.SendMessage{Chat: chat, Text: text, Voice: &brain.Voice{Audio: audio(n), Duration: time.Second, Bytes: 3000}}
	}
	blobs := func(s *Store) int {
		t.Helper()
		n := 0
		if err := s.View(func(tx *Tx) error {
			return tx.Scan(BucketVoice, nil, func(_, _ []byte) error { n++; return nil })
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}

	s := openDelayed(t, path)
	out, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{spoken(1, "one", 1), {Chat: 1, Text: "plain"}, spoken(1, "two", 2)}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitTurn(Commit{Chat: 2, Outbox: []brain.SendMessage{spoken(2, "theirs", 3)}}, now); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[0].Msg.Voice.Audio, audio(1)) {
		t.Fatal("the committed entry lost its audio")
	}
	raw, _ := s.rawOutbox(t, out[0].ID)
	if bytes.Contains(raw, audio(1)[:100]) {
		t.Fatal("the audio is stored in the outbox entry itself")
	}
	s.crash(t)

	s = openDelayed(t, path)
	defer s.Close()
	pending, err := s.PendingOutbox()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 4 || !bytes.Equal(pending[0].Msg.Voice.Audio, audio(1)) || pending[1].Msg.Voice != nil ||
		!bytes.Equal(pending[2].Msg.Voice.Audio, audio(2)) || pending[0].Msg.Voice.Duration != time.Second {
		t.Fatalf("pending after a crash = %+v", pending)
	}
	if got := blobs(s); got != 3 {
		t.Fatalf("blobs = %d, want 3", got)
	}
	// Delivered with others behind it: the audio goes at once.
	if err := s.MarkSent(pending[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := blobs(s); got != 2 {
		t.Fatalf("blobs after the first delivery = %d, want 2", got)
	}
	// Forgetting chat 2 takes its pending voice note's audio.
	if err := s.Forget(2); err != nil {
		t.Fatal(err)
	}
	if got := blobs(s); got != 1 {
		t.Fatalf("blobs after /forget = %d, want 1", got)
	}
	if err := s.MarkSent(pending[1].ID); err != nil {
		t.Fatal(err)
	}
	// The last entry: its removal, audio and all, rides on the next commit.
	if err := s.MarkSent(pending[2].ID); err != nil {
		t.Fatal(err)
	}
	if got := blobs(s); got != 1 {
		t.Fatalf("blobs before the next commit = %d, want 1", got)
	}
	if err := s.FlushSent(); err != nil {
		t.Fatal(err)
	}
	if got := blobs(s); got != 0 {
		t.Fatalf("blobs after the commit = %d, want 0", got)
	}

	// An entry whose audio is gone (a revived dead letter) is sent as text.
	msg := brain.SendMessage{Chat: 1, Text: "revived", Voice: &brain.Voice{Duration: time.Second}}
	if _, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{msg}}, now); err != nil {
		t.Fatal(err)
	}
	if pending, err = s.PendingOutbox(); err != nil || len(pending) != 1 || pending[0].Msg.Voice != nil {
		t.Fatalf("pending = %+v, %v; want the text alone", pending, err)
	}
}

// rawOutbox is the stored JSON of outbox entry id.
func (s *Store) rawOutbox(t *testing.T, id uint64) ([]byte, bool) {
	t.Helper()
	var raw []byte
	if err := s.View(func(tx *Tx) error {
		v, err := tx.Peek(BucketOutbox, brain.U64(id))
		raw = bytes.Clone(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return raw, raw != nil
}

// BenchmarkVoiceOutbox is the store's part of one spoken reply: the turn committed with
// a 52 KB voice note (13 s at an assumed 32 kbit/s) as a blob beside its outbox entry,
// read back as a restart would, and removed once delivered.
func BenchmarkVoiceOutbox(b *testing.B) {
	s := openAt(b, filepath.Join(b.TempDir(), "anima.db"), Options{SentDelay: -1})
	defer s.Close()
	audio := bytes.Repeat([]byte{0x4f}, 52_000)
	msg := brain.SendMessage{Chat: 1, Text: "a reply", Voice: &brain.Voice{Audio: audio, Duration: 13 * time.Second, Bytes: len(audio)}}
	now := time.Now()
	for b.Loop() {
		out, err := s.CommitTurn(Commit{Chat: 1, Outbox: []brain.SendMessage{msg}}, now)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.MarkSent(out[0].ID); err != nil {
			b.Fatal(err)
		}
	}
}
