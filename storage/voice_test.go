package storage

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

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
