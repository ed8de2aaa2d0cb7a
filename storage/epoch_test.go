package storage

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestEpochsOpenEveryEpochTurns: each epoch holds Options.EpochTurns Seqs and is named
// by its first.
func TestEpochsOpenEveryEpochTurns(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "anima.db"), Options{EpochTurns: 4})
	defer s.Close()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for range 5 { // two turns a commit: Seqs 1–10
		turns := []brain.Turn{{Role: "user", Text: "q", At: now}, {Role: "assistant", Text: "a", At: now}}
		if _, err := s.CommitTurn(Commit{Chat: 1, Turns: turns}, now); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.View(func(tx *Tx) error {
		eps := tx.epochs()
		want := []epoch{{BucketHistory, 0}, {epochName(5), 5}, {epochName(9), 9}}
		if len(eps) != len(want) {
			t.Fatalf("epochs = %+v, want %+v", eps, want)
		}
		for i := range want {
			if eps[i] != want[i] {
				t.Errorf("epoch %d = %+v, want %+v", i, eps[i], want[i])
			}
		}
		for seq, i := range map[uint64]int{1: 0, 4: 0, 5: 1, 8: 1, 9: 2, 10: 2, 99: 2} {
			if got := epochOf(eps, seq); got != i {
				t.Errorf("epochOf(%d) = %d, want %d", seq, got, i)
			}
		}
		return nil
	})
}
