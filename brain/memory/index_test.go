package memory_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage/storagetest"
)

// varied is the i-th turn of a conversation with a wider vocabulary than filler's.
func varied(i int) brain.Turn {
	words := []string{"lisbon", "violin", "garden", "tomato", "harbour", "lantern", "meadow", "copper",
		"falcon", "ginger", "orchid", "pepper", "quartz", "saffron", "thistle", "walnut", "yarrow", "zephyr"}
	w := func(k int) string { return words[(i*k+k*k)%len(words)] }
	return brain.Turn{
		Role: []string{"user", "assistant"}[i%2],
		Text: fmt.Sprintf("turn %d: the %s and the %s, then %s %s near the %s", i, w(3), w(5), w(7), w(7), w(11)),
		At:   t0.Add(time.Duration(i) * time.Minute),
		User: 7, Name: "Ann",
	}
}

// TestFoldedIndexSearchesAsTheTail: the same turns searched while all unfolded (read
// directly) and after Maintain folded them into merged segments give the same hits with
// the same scores.
func TestFoldedIndexSearchesAsTheTail(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
	const chat = 5
	const turns = 1500 // 23 folds of 64, merged to tiers of 256 and 1024, and a tail
	for i := 0; i < turns; i += 2 {
		commit(t, st, m, chat, varied(i), varied(i+1))
	}
	queries := []string{"lisbon violin", "tomato and saffron", "turn 17", "walnut walnut zephyr copper", "turn 1499 harbour", "nothing matches xyzzy"}
	before := map[string][]brain.Hit{}
	for _, q := range queries {
		hits, err := m.Search(chat, 7, q, 20)
		if err != nil {
			t.Fatal(err)
		}
		before[q] = hits
	}
	if err := m.Maintain(context.Background(), chat); err != nil {
		t.Fatal(err)
	}
	if n := tailEntries(t, st, chat); n >= 64 {
		t.Fatalf("%d turns left unfolded after Maintain, want fewer than 64", n)
	}
	if n := segments(t, st, chat); n == 0 || n > 8 {
		t.Fatalf("%d segments after folding 1500 turns, want 1..8 (merged)", n)
	}
	// The segments are fenced off from the stats every fold rewrites.
	_ = st.View(func(tx *storagetest.Tx) error {
		for _, tag := range []byte{'f', 'h'} {
			if v, _ := tx.GetRaw(brain.BucketIndex, brain.Key(chat, []byte{tag})); v == nil {
				t.Errorf("no fence %q around the segments", tag)
			}
		}
		return nil
	})
	for _, q := range queries {
		after, err := m.Search(chat, 7, q, 20)
		if err != nil {
			t.Fatal(err)
		}
		want := before[q]
		if len(after) != len(want) {
			t.Fatalf("%q: %d hits folded, %d unfolded", q, len(after), len(want))
		}
		for i := range want {
			if after[i].Text != want[i].Text || math.Abs(after[i].Score-want[i].Score) > 1e-9 {
				t.Errorf("%q hit %d: folded %q (%.6f), unfolded %q (%.6f)", q, i, after[i].Text, after[i].Score, want[i].Text, want[i].Score)
			}
		}
	}
	if h := before["turn 17"]; len(h) == 0 || !strings.HasPrefix(h[0].Text, `assistant: turn 17:`) {
		t.Errorf("turn 17 hits = %+v", h)
	}
}

// tailEntries counts chat's unfolded indexed turns: history entries marked indexed
// after the index's folded high-water mark.
func tailEntries[T memory.Tx](t *testing.T, st memory.Store[T], chat int64) int {
	t.Helper()
	n := 0
	err := st.View(func(tx T) error {
		var stats struct {
			Through uint64 `json:"through_seq"`
		}
		if _, err := tx.Get(brain.BucketIndex, brain.Key(chat, []byte{'s'}), &stats); err != nil {
			return err
		}
		return tx.HistoryFrom(chat, 0, func(k, v []byte) error {
			_, marked, err := brain.DecodeHistory(v)
			if marked && brain.HistorySeq(k) > stats.Through {
				n++
			}
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func segments[T memory.Tx](t *testing.T, st memory.Store[T], chat int64) int {
	t.Helper()
	n := 0
	_ = st.View(func(tx T) error {
		return tx.Scan(brain.BucketIndex, brain.Key(chat, []byte{'g'}), func(_, _ []byte) error { n++; return nil })
	})
	return n
}

// TestSearchFoldsALongTail: a chat with more unfolded turns than one fold takes (as a
// migrated chat has before its first upkeep) is folded by its first search, which then
// finds what it finds unfolded.
func TestSearchFoldsALongTail(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
	const chat, n = 4, 4200 // more than foldMax (4096)
	turns := make([]brain.Turn, n)
	for i := range turns {
		turns[i] = varied(i)
	}
	turns[123].Text = "the stolen bicycle in lisbon"
	commit(t, st, m, chat, turns...)
	if got := segments(t, st, chat); got != 0 {
		t.Fatalf("%d segments before any upkeep", got)
	}
	hits, err := m.Search(chat, chat, "stolen bicycle", 1)
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Text, "stolen bicycle") {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	if got := segments(t, st, chat); got == 0 {
		t.Error("the first search folded nothing")
	}
	if got := tailEntries(t, st, chat); got >= 64 {
		t.Errorf("%d turns left unfolded after the first search", got)
	}
}
