package memory_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
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

// variedTurns is n varied turns from the from-th on.
func variedTurns(from, n int) []brain.Turn {
	out := make([]brain.Turn, n)
	for i := range out {
		out[i] = varied(from + i)
	}
	return out
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
	// Committed 100 at a time: the index and history are byte for byte those of a commit
	// per pair (folding is Maintain's, not the commit's), in 15 transactions, not 750.
	for i := 0; i < turns; i += 100 {
		commit(t, st, m, chat, variedTurns(i, 100)...)
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
	turns := variedTurns(0, n)
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

func TestSearchFindsPhraseFrom300TurnsAgo(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{})
	const chat = 42
	commit(t, st, m, chat,
		brain.Turn{Role: "user", Text: "My grandmother's blue bicycle was stolen in Lisbon last spring.", At: t0},
		brain.Turn{Role: "assistant", Text: "Oh no, I'm sorry about the bicycle!", At: t0})
	for i := 2; i < 330; i += 2 {
		commit(t, st, m, chat, filler(i), filler(i+1))
	}
	// Another chat mentioning the same words must not leak in.
	commit(t, st, m, 99, brain.Turn{Role: "user", Text: "my blue bicycle in Lisbon", At: t0})
	_ = st.Close()

	st = storagetest.Open(t, path)
	m = newMemory(t, st, nil, memory.Options{})
	hits, err := m.Search(chat, chat, "that stolen bicycle in lisbon?", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "blue bicycle was stolen in Lisbon") {
		t.Fatalf("hits = %+v", hits)
	}
	if hits[0].Source != "turn" || !hits[0].At.Equal(t0) || !strings.HasPrefix(hits[0].Text, "user: ") {
		t.Errorf("top hit = %+v", hits[0])
	}
	for _, h := range hits {
		if strings.Contains(h.Text, "my blue bicycle in Lisbon") {
			t.Errorf("hit from another chat: %+v", h)
		}
	}

	// Recall brings it back as a memory: it is not among the recent turns.
	r, err := m.Recall(context.Background(), chat, chat, "remember the bicycle in Lisbon?", 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Memories) == 0 || !strings.Contains(r.Memories[0].Text, "Lisbon") {
		t.Errorf("recall memories = %+v", r.Memories)
	}
	if len(r.Memories) > 3 {
		t.Errorf("recall has %d memories, want ≤ 3", len(r.Memories))
	}

	if hits, _ := m.Search(chat, chat, "the and of", 3); len(hits) != 0 {
		t.Errorf("stopword query found %+v", hits)
	}
	if hits, _ := m.Search(chat, chat, "zeppelin", 3); len(hits) != 0 {
		t.Errorf("unknown word found %+v", hits)
	}

	// Forget drops the chat's index with its history.
	if err := st.Forget(chat); err != nil {
		t.Fatal(err)
	}
	if hits, _ := m.Search(chat, chat, "bicycle", 3); len(hits) != 0 {
		t.Errorf("search after forget = %+v", hits)
	}
	if hits, _ := m.Search(99, 99, "bicycle", 3); len(hits) != 1 {
		t.Errorf("other chat's index lost: %+v", hits)
	}
}

func BenchmarkSearch1000Turns(b *testing.B) {
	st := storagetest.Open(b, filepath.Join(b.TempDir(), "anima.db"))
	m := newMemory(b, st, nil, memory.Options{})
	for i := 0; i < 1000; i += 10 {
		turns := make([]brain.Turn, 10)
		for j := range turns {
			turns[j] = filler(i + j)
		}
		commit(b, st, m, 1, turns...)
		// The journal runs the upkeep after every turn: it folds the index's tail.
		if err := m.Maintain(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		hits, err := m.Search(1, 1, "coffee at work, football and movies", 5)
		if err != nil || len(hits) == 0 {
			b.Fatalf("hits = %v, %v", hits, err)
		}
	}
}

// TestUnindexRewritesSegments: a member's /forget removes their turns from folded
// segments too, and the statistics stay consistent (the rest is still found).
func TestUnindexRewritesSegments(t *testing.T) {
	t.Parallel()
	const grp = -200
	st, m := bicycleGroup(t, grp)
	for i := 0; i < 300; i += 2 {
		a, b := varied(i), varied(i+1)
		a.User, b.User = 2, 2
		commit(t, st, m, grp, a, b)
	}
	if err := m.Maintain(context.Background(), grp); err != nil {
		t.Fatal(err)
	}
	if n := segments(t, st, grp); n == 0 {
		t.Fatal("nothing folded")
	}
	if _, err := st.ForgetUser(1, unindexer(m)); err != nil {
		t.Fatal(err)
	}
	hits, err := m.Search(grp, 2, "bicycle", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Text != `"Ben": my bicycle is blue` {
		t.Errorf("hits after Ann's forget = %+v, want only Ben's turn", hits)
	}
	// Forgetting Ben empties the folded segments; the chat's index stays usable.
	if _, err := st.ForgetUser(2, unindexer(m)); err != nil {
		t.Fatal(err)
	}
	if hits, _ := m.Search(grp, 2, "bicycle lisbon", 10); len(hits) != 0 {
		t.Errorf("hits after everyone forgot = %+v", hits)
	}
	commit(t, st, m, grp, brain.Turn{Role: "user", Text: "a new bicycle", At: t0, User: 3, Name: "Cy"})
	if hits, _ := m.Search(grp, 3, "bicycle", 10); len(hits) != 1 {
		t.Errorf("hits after a new turn = %+v, want 1", hits)
	}
}

// bicycleHistory commits 100 varied turns to chat, the 41st about a stolen bicycle in
// Lisbon, without indexing them, and returns the chat's history.
func bicycleHistory(t *testing.T, st *storage.Store, chat int64) []brain.Turn {
	t.Helper()
	for i := range 100 {
		tn := varied(i)
		if i == 40 {
			tn.Text = "the stolen bicycle in lisbon"
		}
		if _, err := st.CommitTurn(storage.Commit{Chat: chat, Turns: []brain.Turn{tn}}, t0); err != nil {
			t.Fatal(err)
		}
	}
	h, err := st.History(chat, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestTurnCommitWritesNoIndexKey: indexing a turn in its commit marks its history entry
// and writes nothing to the index bucket (the commit's pages are history's).
func TestTurnCommitWritesNoIndexKey(t *testing.T) {
	t.Parallel()
	st, m := openMemory(t)
	commit(t, st, m, 3, brain.Turn{Role: "user", Text: "my kitten is called Miso", At: t0})
	commit(t, st, m, 3, brain.Turn{Role: "assistant", Text: "Miso is a lovely name", At: t0})
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(brain.BucketIndex, nil, func(k, _ []byte) error {
			t.Errorf("index key %q written by a turn's commit", k)
			return nil
		})
	})
	if n := tailEntries(t, st, 3); n != 2 {
		t.Errorf("%d turns marked indexed, want 2", n)
	}
	// Committing the same turns again (a retried IndexTx) changes nothing.
	h, _ := st.History(3, 0)
	if err := st.Update(func(tx *storage.Tx) error { return m.IndexTx(tx, 3, h) }); err != nil {
		t.Fatal(err)
	}
	if hits, err := m.Search(3, 3, "kitten miso", 5); err != nil || len(hits) != 2 {
		t.Errorf("hits = %+v, %v, want both turns", hits, err)
	}
}

// TestUnindexRemovesTurnsFromSearch: turns taken out of the index (a member's /forget)
// are not found any more; the others still are, labelled with their writer.
func TestUnindexRemovesTurnsFromSearch(t *testing.T) {
	t.Parallel()
	const grp = -100
	st, m := bicycleGroup(t, grp)
	h, _ := st.History(grp, 0)
	rep, err := st.ForgetUser(1, unindexer(m))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 1 || h[0].User != 1 {
		t.Fatalf("forgot %d turns, want Ann's one", rep.Turns)
	}
	hits, err := m.Search(grp, 2, "bicycle", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Text != `"Ben": my bicycle is blue` {
		t.Errorf("hits after Ann's forget = %+v, want only Ben's turn, labelled", hits)
	}
	// The index stays usable: a new turn is found.
	commit(t, st, m, grp, brain.Turn{Role: "user", Text: "bicycle again", At: t0, User: 2, Name: "Ben"})
	if hits, _ := m.Search(grp, 2, "bicycle", 10); len(hits) != 2 {
		t.Errorf("hits after a new turn = %+v, want 2", hits)
	}
}

// unindexer is m.UnindexTx as storage.Store.ForgetUser takes it.
// openMemory is a memory on a fresh store in t's temporary directory.
func openMemory(t *testing.T) (*storage.Store, *memory.Memory) {
	t.Helper()
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	return st, newMemory(t, st, nil, memory.Options{})
}

// bicycleGroup is a memory on a fresh store where group grp has a turn of two members,
// each saying a colour of their bicycle: Ann (user 1) red, Ben (user 2) blue.
func bicycleGroup(t *testing.T, grp int64) (*storage.Store, *memory.Memory) {
	t.Helper()
	st, m := openMemory(t)
	commit(t, st, m, grp,
		brain.Turn{Role: "user", Text: "my bicycle is red", At: t0, User: 1, Name: "Ann"},
		brain.Turn{Role: "user", Text: "my bicycle is blue", At: t0, User: 2, Name: "Ben"})
	return st, m
}

func unindexer(m *memory.Memory) storage.Unindexer {
	return func(tx *storage.Tx, chat int64, seqs []uint64) error { return m.UnindexTx(tx, chat, seqs) }
}
