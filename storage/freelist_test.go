package storage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// syncedFreelist reports whether the newest meta page of the bbolt file at path points
// to a written freelist (bbolt's meta: a 16-byte page header, then magic, version, page
// size and flags, the root bucket, the freelist's page id, the high-water page id, the
// transaction id).
func syncedFreelist(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(binary.LittleEndian.Uint32(data[16+8:]))
	const noFreelist = ^uint64(0)
	var best, freelist uint64
	for _, off := range []int{0, pageSize} {
		m := data[off+16:]
		if txid := binary.LittleEndian.Uint64(m[48:]); txid >= best {
			best, freelist = txid, binary.LittleEndian.Uint64(m[32:])
		}
	}
	return freelist != noFreelist
}

// TestFreelistWrittenAtClose: commits skip the freelist; Close writes it, so the next
// Open reads it instead of walking the file; after a crash (no Close) Open rebuilds it and
// the store works as before.
func TestFreelistWrittenAtClose(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	commit := func(s *Store, chat int64) {
		t.Helper()
		turn := brain.Turn{Role: "user", Text: "a message worth keeping", At: now}
		if _, err := s.CommitTurn(Commit{Chat: chat, Turns: []brain.Turn{turn}}, now); err != nil {
			t.Fatal(err)
		}
	}
	s := openAt(t, path, Options{})
	commit(s, 1)
	if syncedFreelist(t, path) {
		t.Fatal("a commit wrote the freelist")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !syncedFreelist(t, path) {
		t.Fatal("Close did not write the freelist")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	s = openAt(t, path, Options{})
	commit(s, 2)
	if err := s.db.Close(); err != nil { // a crash: no freelist written
		t.Fatal(err)
	}
	if syncedFreelist(t, path) {
		t.Fatal("freelist written without Close")
	}
	if freelistOnDisk(path) {
		t.Fatal("freelistOnDisk sees a freelist a crash did not write")
	}
	s = openAt(t, path, Options{})
	if !syncedFreelist(t, path) || !freelistOnDisk(path) {
		t.Fatal("an Open after a crash did not write the freelist it rebuilt")
	}
	commit(s, 3)
	for chat := int64(1); chat <= 3; chat++ {
		if h, err := s.History(chat, 0); err != nil || len(h) != 1 {
			t.Fatalf("chat %d history = %v, %v", chat, h, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !syncedFreelist(t, path) {
		t.Fatal("Close after a crash did not write the freelist")
	}

	s = openAt(t, path, Options{SyncFreelist: true})
	defer s.Close()
	commit(s, 4)
	if !syncedFreelist(t, path) {
		t.Fatal("SyncFreelist: a commit did not write the freelist")
	}
}
