package storage_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

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
