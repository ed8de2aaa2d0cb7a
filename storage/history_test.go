package storage_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// TestHistoryAcrossEpochs: with epochs of 4 turns, a chat's history spread over several
// epochs reads as one — newest first, from a Seq on, by Seq — survives a reopen and a
// compaction without reusing a Seq, and forgetting removes it from every epoch.
func TestHistoryAcrossEpochs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	opts := storage.Options{EpochTurns: 4}
	s := openWith(t, path, opts)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	say := func(s *storage.Store, chat, user int64, text string) {
		t.Helper()
		if _, err := s.CommitTurn(storage.Commit{Chat: chat, Turns: []brain.Turn{{Role: "user", Text: text, User: user, At: now}}}, now); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 9 { // chat 1: a0..a8; chats 2 and 3 between them
		say(s, 1, 1, fmt.Sprintf("a%d", i))
		say(s, 2, 2, fmt.Sprintf("b%d", i))
		if i%3 == 0 {
			say(s, -5, 3, fmt.Sprintf("g%d", i)) // a group: user 3 speaks
		}
	}
	texts := func(s *storage.Store, chat int64) []string {
		t.Helper()
		turns, err := s.History(chat, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tu := range turns {
			out = append(out, tu.Text)
		}
		return out
	}
	want := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}
	if got := texts(s, 1); !slices.Equal(got, want) {
		t.Fatalf("history of chat 1 = %v, want %v", got, want)
	}
	var seqs []uint64
	err := s.View(func(tx *storage.Tx) error {
		return tx.HistoryReverse(1, func(k, _ []byte) error {
			seqs = append(seqs, brain.HistorySeq(k))
			return nil
		})
	})
	if err != nil || len(seqs) != 9 || !slices.IsSortedFunc(seqs, func(a, b uint64) int { return int(b) - int(a) }) {
		t.Fatalf("HistoryReverse seqs = %v, %v; want 9, newest first", seqs, err)
	}
	// From a Seq in the middle, across epochs, stopping early; and each entry by Seq.
	err = s.View(func(tx *storage.Tx) error {
		var got []string
		if err := tx.HistoryFrom(1, seqs[6], func(_, v []byte) error {
			tu, _, err := brain.DecodeHistory(v)
			got = append(got, tu.Text)
			if len(got) == 4 {
				return brain.ErrStop
			}
			return err
		}); err != nil {
			return err
		}
		if !slices.Equal(got, []string{"a2", "a3", "a4", "a5"}) {
			t.Errorf("HistoryFrom(seq of a2) = %v", got)
		}
		for i, seq := range seqs {
			var tu brain.Turn
			if ok, err := tx.HistoryGet(1, seq, &tu); err != nil || !ok || tu.Text != want[8-i] {
				t.Errorf("HistoryGet(%d) = %q, %v, %v; want %q", seq, tu.Text, ok, err, want[8-i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *storage.Tx) error {
		ok, err := tx.MarkIndexed(1, seqs[8]) // a0, in the first epoch
		if !ok || err != nil {
			t.Errorf("MarkIndexed in the first epoch = %v, %v", ok, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: the epochs are found again and Seqs go on from the newest.
	s = openWith(t, path, opts)
	say(s, 1, 1, "a9")
	if got := texts(s, 1); !slices.Equal(got, append(want, "a9")) {
		t.Fatalf("after a reopen, history of chat 1 = %v", got)
	}
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	say(s, 1, 1, "a10")
	got := texts(s, 1)
	if !slices.Equal(got, append(want, "a9", "a10")) {
		t.Fatalf("after a compaction, history of chat 1 = %v", got)
	}
	var all []uint64
	_ = s.View(func(tx *storage.Tx) error {
		return tx.HistoryEach(func(k, _ []byte) error { all = append(all, brain.HistorySeq(k)); return nil })
	})
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) || len(all) != 9+9+3+2 {
		t.Errorf("Seqs over all epochs = %v: want %d, none twice", all, 9+9+3+2)
	}

	// Forgetting: chat 2 entirely; user 3's turns in the group.
	if err := s.Forget(2); err != nil {
		t.Fatal(err)
	}
	if got := texts(s, 2); len(got) != 0 {
		t.Errorf("after Forget(2), its history = %v", got)
	}
	rep, err := s.ForgetUser(3, nil)
	if err != nil || rep.Turns != 3 {
		t.Errorf("ForgetUser(3) = %+v, %v; want its 3 group turns", rep, err)
	}
	if got := texts(s, -5); len(got) != 0 {
		t.Errorf("after ForgetUser(3), the group's history = %v", got)
	}
	if got := texts(s, 1); !strings.HasPrefix(strings.Join(got, " "), "a0 a1") {
		t.Errorf("forgetting others changed chat 1: %v", got)
	}
}
