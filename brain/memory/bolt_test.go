package memory_test

// The tests here need what only storage's bbolt file does: a reopen and storage's own
// deletions (Forget, ForgetUser); migrate_test.go's need old files. The rest run on
// storagetest's memory-only store.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

func TestRememberReplacesSurvivesReopenAndRecalls(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{})
	if err := m.Remember(7, 7, "Favourite Colour", "green", t0); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(7, 7, "name", "Ann", t0); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(7, 7, "  favourite-colour ", "deep\nblue", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(8, 8, "name", "Bob", t0); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	st = storagetest.Open(t, path)
	m = newMemory(t, st, nil, memory.Options{})
	facts, err := m.Facts(7, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := []brain.Fact{
		{Attribute: "favourite_colour", Value: "deep blue", At: t0.Add(time.Hour)},
		{Attribute: "name", Value: "Ann", At: t0},
	}
	if len(facts) != len(want) {
		t.Fatalf("facts = %+v, want %+v", facts, want)
	}
	for i := range want {
		if facts[i].Attribute != want[i].Attribute || facts[i].Value != want[i].Value || !facts[i].At.Equal(want[i].At) {
			t.Errorf("fact %d = %+v, want %+v", i, facts[i], want[i])
		}
	}

	commit(t, st, m, 7, brain.Turn{Role: "user", Text: "hello", At: t0})
	r, err := m.Recall(context.Background(), 7, 7, "what colour do I like", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Facts) != 2 || r.Facts[0].Value != "deep blue" {
		t.Errorf("recall facts = %+v", r.Facts)
	}
	if len(r.Turns) != 1 || r.Turns[0].Text != "hello" {
		t.Errorf("recall turns = %+v", r.Turns)
	}

	// Forget removes the facts with the rest of the user's data.
	if err := st.Forget(7); err != nil {
		t.Fatal(err)
	}
	if facts, _ := m.Facts(7, 7); len(facts) != 0 {
		t.Errorf("facts after forget = %+v", facts)
	}
	if facts, _ := m.Facts(8, 8); len(facts) != 1 {
		t.Errorf("facts of another user = %+v", facts)
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
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	m := newMemory(t, st, nil, memory.Options{})
	const grp = -200
	commit(t, st, m, grp,
		brain.Turn{Role: "user", Text: "my bicycle is red", At: t0, User: 1, Name: "Ann"},
		brain.Turn{Role: "user", Text: "my bicycle is blue", At: t0, User: 2, Name: "Ben"})
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
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	m := newMemory(t, st, nil, memory.Options{})
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
	st := storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
	m := newMemory(t, st, nil, memory.Options{})
	const grp = -100
	commit(t, st, m, grp,
		brain.Turn{Role: "user", Text: "my bicycle is red", At: t0, User: 1, Name: "Ann"},
		brain.Turn{Role: "user", Text: "my bicycle is blue", At: t0, User: 2, Name: "Ben"})
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
func unindexer(m *memory.Memory) storage.Unindexer {
	return func(tx *storage.Tx, chat int64, seqs []uint64) error { return m.UnindexTx(tx, chat, seqs) }
}
