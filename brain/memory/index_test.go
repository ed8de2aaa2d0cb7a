package memory_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
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
	st := openStore(t, filepath.Join(t.TempDir(), "anima.db"))
	m := memory.New(st, nil, memory.Options{})
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
	_ = st.View(func(tx *storage.Tx) error {
		for _, tag := range []byte{'f', 'h'} {
			if v, _ := tx.GetRaw(storage.BucketIndex, storage.Key(chat, []byte{tag})); v == nil {
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

// TestUnindexRewritesSegments: a member's /forget removes their turns from folded
// segments too, and the statistics stay consistent (the rest is still found).
func TestUnindexRewritesSegments(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "anima.db"))
	m := memory.New(st, nil, memory.Options{})
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
	if _, err := st.ForgetUser(1, m.UnindexTx); err != nil {
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
	if _, err := st.ForgetUser(2, m.UnindexTx); err != nil {
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

// TestOpenMigratesSchemaTwoIndex: a store whose index has the schema-2 layout (a copy of
// each turn and one key per posting) is converted on Open, and search finds old turns
// (before and after they are folded) but not turns that were never indexed.
func TestOpenMigratesSchemaTwoIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := openStore(t, path)
	const chat = 9
	var seqs []uint64
	h := bicycleHistory(t, st, chat)
	// Write the old layout by hand: turns 0..89 indexed, 90..99 not.
	err := st.Update(func(tx *storage.Tx) error {
		for i, tn := range h[:90] {
			seqs = append(seqs, tn.Seq)
			doc, _ := json.Marshal(map[string]any{"seq": tn.Seq, "role": tn.Role, "text": tn.Text, "at": tn.At})
			if err := tx.PutRaw(storage.BucketIndex, storage.Key(chat, []byte{'d'}, storage.U64(uint64(i+1))), doc); err != nil {
				return err
			}
			for _, w := range strings.Fields(tn.Text) {
				k := storage.Key(chat, []byte{'p'}, []byte(w), []byte{0}, storage.U64(uint64(i+1)))
				if err := tx.PutRaw(storage.BucketIndex, k, binary.AppendUvarint(binary.AppendUvarint(nil, 1), 8)); err != nil {
					return err
				}
			}
		}
		stats, _ := json.Marshal(map[string]uint64{"docs": 90, "total_len": 720, "next_doc": 90, "through_seq": h[89].Seq})
		if err := tx.PutRaw(storage.BucketIndex, storage.Key(chat, []byte{'s'}), stats); err != nil {
			return err
		}
		return tx.PutRaw(storage.BucketMeta, []byte("schema"), []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openStore(t, path)
	m := memory.New(st, nil, memory.Options{})
	check := func(stage string) {
		t.Helper()
		hits, err := m.Search(chat, chat, "stolen bicycle", 3)
		if err != nil || len(hits) != 1 || hits[0].Text != `"Ann": the stolen bicycle in lisbon` {
			t.Errorf("%s: hits = %+v, %v", stage, hits, err)
		}
		hits, _ = m.Search(chat, chat, "turn 95", 50)
		for _, h := range hits {
			if strings.Contains(h.Text, "turn 95:") {
				t.Errorf("%s: a turn never indexed is found: %+v", stage, h)
			}
		}
		if hits, _ := m.Search(chat, chat, "turn 85", 1); len(hits) != 1 || !strings.Contains(hits[0].Text, "turn 85:") {
			t.Errorf("%s: turn 85 not found: %+v", stage, hits)
		}
	}
	check("migrated")
	if err := m.Maintain(context.Background(), chat); err != nil {
		t.Fatal(err)
	}
	if n := tailEntries(t, st, chat); n != 0 {
		t.Errorf("%d tail entries after Maintain, want all 90 folded", n)
	}
	check("folded")
	var schema []byte
	_ = st.View(func(tx *storage.Tx) error { schema, err = tx.GetRaw(storage.BucketMeta, []byte("schema")); return err })
	if want := strconv.Itoa(storage.SchemaVersion); string(schema) != want {
		t.Errorf("schema %q, want %s", schema, want)
	}
	// Old keys are gone.
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(storage.BucketIndex, storage.ID64(chat), func(k, _ []byte) error {
			if k[8] == 'd' || k[8] == 'p' {
				t.Errorf("old index key %q left", k)
				return storage.ErrStop
			}
			return nil
		})
	})
}

// tailEntries counts chat's unfolded indexed turns: history entries marked indexed
// after the index's folded high-water mark.
func tailEntries(t *testing.T, st *storage.Store, chat int64) int {
	t.Helper()
	n := 0
	err := st.View(func(tx *storage.Tx) error {
		var stats struct {
			Through uint64 `json:"through_seq"`
		}
		if _, err := tx.Get(storage.BucketIndex, storage.Key(chat, []byte{'s'}), &stats); err != nil {
			return err
		}
		return tx.HistoryFrom(chat, 0, func(k, v []byte) error {
			_, marked, err := storage.DecodeHistory(v)
			if marked && storage.HistorySeq(k) > stats.Through {
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

func segments(t *testing.T, st *storage.Store, chat int64) int {
	t.Helper()
	n := 0
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(storage.BucketIndex, storage.Key(chat, []byte{'g'}), func(_, _ []byte) error { n++; return nil })
	})
	return n
}

// TestOpenMigratesSchemaThreeTail: a store with schema-3 tail keys (one index key per
// unfolded turn) is converted on Open: the keys go, the turns' history entries are
// marked, and search finds the turns (before and after folding) but not turns that were
// never indexed — both for a chat migrated from schema 2 (its high-water mark past the
// tail) and for one whose tail was written by schema 3.
func TestOpenMigratesSchemaThreeTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := openStore(t, path)
	for _, chat := range []int64{11, 12} {
		h := bicycleHistory(t, st, chat)
		err := st.Update(func(tx *storage.Tx) error {
			for i, tn := range h[:90] {
				v := []byte{} // schema 2 → 3: read the turn from history
				if chat == 12 && i%2 == 0 {
					v = []byte{2, 1, 4, 't', 'u', 'r', 'n', 1} // schema 3: the turn's terms
				}
				if err := tx.PutRaw(storage.BucketIndex, storage.Key(chat, []byte{'t'}, storage.U64(tn.Seq)), v); err != nil {
					return err
				}
			}
			if chat == 12 {
				return nil
			}
			stats, _ := json.Marshal(map[string]uint64{"docs": 0, "total_len": 0, "through_seq": h[89].Seq})
			return tx.PutRaw(storage.BucketIndex, storage.Key(chat, []byte{'s'}), stats)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Update(func(tx *storage.Tx) error { return tx.PutRaw(storage.BucketMeta, []byte("schema"), []byte("3")) }); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openStore(t, path)
	m := memory.New(st, nil, memory.Options{})
	for _, chat := range []int64{11, 12} {
		check := func(stage string) {
			t.Helper()
			hits, err := m.Search(chat, chat, "stolen bicycle", 3)
			if err != nil || len(hits) != 1 || hits[0].Text != `"Ann": the stolen bicycle in lisbon` {
				t.Errorf("chat %d %s: hits = %+v, %v", chat, stage, hits, err)
			}
			hits, _ = m.Search(chat, chat, "turn 95", 50)
			for _, h := range hits {
				if strings.Contains(h.Text, "turn 95:") {
					t.Errorf("chat %d %s: a turn never indexed is found: %+v", chat, stage, h)
				}
			}
			if hits, _ := m.Search(chat, chat, "turn 85", 1); len(hits) != 1 || !strings.Contains(hits[0].Text, "turn 85:") {
				t.Errorf("chat %d %s: turn 85 not found: %+v", chat, stage, hits)
			}
		}
		if n := tailEntries(t, st, chat); n != 90 {
			t.Errorf("chat %d: %d unfolded turns after migration, want 90", chat, n)
		}
		check("migrated")
		if err := m.Maintain(context.Background(), chat); err != nil {
			t.Fatal(err)
		}
		if n := tailEntries(t, st, chat); n != 0 {
			t.Errorf("chat %d: %d unfolded turns after Maintain, want all 90 folded", chat, n)
		}
		check("folded")
		_ = st.View(func(tx *storage.Tx) error {
			return tx.Scan(storage.BucketIndex, storage.ID64(chat), func(k, _ []byte) error {
				if k[8] == 't' {
					t.Errorf("chat %d: schema-3 tail key %q left", chat, k)
					return storage.ErrStop
				}
				return nil
			})
		})
	}
}

// TestTurnCommitWritesNoIndexKey: indexing a turn in its commit marks its history entry
// and writes nothing to the index bucket (the commit's pages are history's).
func TestTurnCommitWritesNoIndexKey(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "anima.db"))
	m := memory.New(st, nil, memory.Options{})
	commit(t, st, m, 3, brain.Turn{Role: "user", Text: "my kitten is called Miso", At: t0})
	commit(t, st, m, 3, brain.Turn{Role: "assistant", Text: "Miso is a lovely name", At: t0})
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(storage.BucketIndex, nil, func(k, _ []byte) error {
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

// TestSearchFoldsALongTail: a chat with more unfolded turns than one fold takes (as a
// migrated chat has before its first upkeep) is folded by its first search, which then
// finds what it finds unfolded.
func TestSearchFoldsALongTail(t *testing.T) {
	t.Parallel()
	st := openStore(t, filepath.Join(t.TempDir(), "anima.db"))
	m := memory.New(st, nil, memory.Options{})
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
