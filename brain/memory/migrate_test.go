package memory_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/memory/memorytest"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// writeSchemaTwo writes at path a store of schema 2 whose chat has 100 turns (bicycleHistory)
// and an index in the schema-2 layout, written by hand: a copy of each turn and one key per
// posting, turns 0..89 indexed, 90..99 not. It returns the chat's history.
func writeSchemaTwo(t *testing.T, path string, chat int64) []brain.Turn {
	t.Helper()
	st := storagetest.Open(t, path)
	h := bicycleHistory(t, st, chat)
	memorytest.Leave(t, st, 2, func(tx *storage.Tx) error {
		for i, tn := range h[:90] {
			doc, _ := json.Marshal(map[string]any{"seq": tn.Seq, "role": tn.Role, "text": tn.Text, "at": tn.At})
			if err := tx.PutRaw(brain.BucketIndex, brain.Key(chat, []byte{'d'}, brain.U64(uint64(i+1))), doc); err != nil {
				return err
			}
			for _, w := range strings.Fields(tn.Text) {
				k := brain.Key(chat, []byte{'p'}, []byte(w), []byte{0}, brain.U64(uint64(i+1)))
				if err := tx.PutRaw(brain.BucketIndex, k, binary.AppendUvarint(binary.AppendUvarint(nil, 1), 8)); err != nil {
					return err
				}
			}
		}
		stats, _ := json.Marshal(map[string]uint64{"docs": 90, "total_len": 720, "next_doc": 90, "through_seq": h[89].Seq})
		return tx.PutRaw(brain.BucketIndex, brain.Key(chat, []byte{'s'}), stats)
	})
	return h
}

// writeSchemaThree writes at path a store of schema 3 with two chats of 100 turns each
// (bicycleHistory), 11 and 12, whose first 90 turns have schema-3 tail keys (one index
// key per unfolded turn), written by hand: chat 11 as migrated from schema 2 (empty
// values, its high-water mark past the tail), chat 12 as written by schema 3 (every other
// value the turn's terms, no stats).
func writeSchemaThree(t *testing.T, path string) {
	t.Helper()
	st := storagetest.Open(t, path)
	h := map[int64][]brain.Turn{11: bicycleHistory(t, st, 11), 12: bicycleHistory(t, st, 12)}
	memorytest.Leave(t, st, 3, func(tx *storage.Tx) error {
		for _, chat := range []int64{11, 12} {
			for i, tn := range h[chat][:90] {
				v := []byte{} // schema 2 → 3: read the turn from history
				if chat == 12 && i%2 == 0 {
					v = []byte{2, 1, 4, 't', 'u', 'r', 'n', 1} // schema 3: the turn's terms
				}
				if err := tx.PutRaw(brain.BucketIndex, memorytest.TailKey(chat, tn.Seq), v); err != nil {
					return err
				}
			}
		}
		stats, _ := json.Marshal(map[string]uint64{"docs": 0, "total_len": 0, "through_seq": h[11][89].Seq})
		return tx.PutRaw(brain.BucketIndex, brain.Key(11, []byte{'s'}), stats)
	})
}

// oldFile is an old store: its name (of its golden file) and what writes it.
type oldFile struct {
	name  string
	write func(t *testing.T, path string)
}

// open writes the old store in t's temporary directory and opens it with storage alone;
// it returns the store and its path.
func (o oldFile) open(t *testing.T) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "anima.db")
	o.write(t, path)
	return storagetest.Open(t, path), path
}

// wantMigrated builds memory on st and compares what the migration wrote with
// testdata/migrated-<name>.golden.
func (o oldFile) wantMigrated(t *testing.T, st *storage.Store) {
	t.Helper()
	newMemory(t, st, nil, memory.Options{})
	golden(t, filepath.Join("testdata", "migrated-"+o.name+".golden"), dump(t, st))
}

// oldFiles are the old stores the migration tests start from.
var oldFiles = []oldFile{
	{"schema-2", func(t *testing.T, path string) { writeSchemaTwo(t, path, 9) }},
	{"schema-3", writeSchemaThree},
}

// eachOldFile runs test in parallel subtests, one per old store (the i-th of oldFiles,
// of schema i+2), written and opened by storage alone (oldFile.open).
func eachOldFile(t *testing.T, test func(t *testing.T, i int, tc oldFile, st *storage.Store, path string)) {
	t.Helper()
	for i, tc := range oldFiles {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, path := tc.open(t)
			test(t, i, tc, st, path)
		})
	}
}

// dump lists every key and value of the buckets a migration of the index reads or
// writes (meta, index, history), one line each: bucket, key in hex, value quoted.
func dump(t *testing.T, st *storage.Store) []byte {
	t.Helper()
	var out bytes.Buffer
	err := st.View(func(tx *storage.Tx) error {
		for _, b := range []string{storage.BucketMeta, brain.BucketIndex, storage.BucketHistory} {
			err := tx.Scan(b, nil, func(k, v []byte) error {
				fmt.Fprintf(&out, "%s %x %q\n", b, k, v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// golden compares got with the file at path (rewriting it under -update).
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d is\n%s\nwant\n%s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", path, len(gl), len(wl))
	}
}

// TestMigratedIndexBytes: an old store, opened and memory built on it, holds the index,
// history marks, stats and meta in testdata/migrated-*.golden, which the migrations wrote
// when storage.Open ran them (before they moved into memory).
func TestMigratedIndexBytes(t *testing.T) {
	t.Parallel()
	eachOldFile(t, func(t *testing.T, _ int, tc oldFile, st *storage.Store, _ string) {
		tc.wantMigrated(t, st)
	})
}

// searchesAsBefore checks that search on chat (bicycleHistory's, 90 turns indexed in the
// old file) finds old turns but not the ones never indexed.
func searchesAsBefore(t *testing.T, m *memory.Memory, chat int64, stage string) {
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

// owed reports the index's owed upgrade in st.
func owed(t *testing.T, st *storage.Store) (from int, ok bool) {
	t.Helper()
	err := st.View(func(tx *storage.Tx) error {
		var err error
		from, ok, err = tx.Owed(brain.PartIndex)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return from, ok
}

// TestNewMigratesSchemaTwoIndex: a store whose index has the schema-2 layout (a copy of
// each turn and one key per posting) is converted when memory is built on it, and search
// finds old turns (before and after they are folded) but not turns that were never
// indexed.
func TestNewMigratesSchemaTwoIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	const chat = 9
	writeSchemaTwo(t, path, chat)

	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{})
	searchesAsBefore(t, m, chat, "migrated")
	if err := m.Maintain(context.Background(), chat); err != nil {
		t.Fatal(err)
	}
	if n := tailEntries(t, st, chat); n != 0 {
		t.Errorf("%d tail entries after Maintain, want all 90 folded", n)
	}
	searchesAsBefore(t, m, chat, "folded")
	var schema []byte
	_ = st.View(func(tx *storage.Tx) error {
		var err error
		schema, err = tx.GetRaw(storage.BucketMeta, []byte("schema"))
		return err
	})
	if want := strconv.Itoa(storage.SchemaVersion); string(schema) != want {
		t.Errorf("schema %q, want %s", schema, want)
	}
	if from, ok := owed(t, st); ok {
		t.Errorf("the index still owes an upgrade from schema %d", from)
	}
	// Old keys are gone.
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(brain.BucketIndex, brain.ID64(chat), func(k, _ []byte) error {
			if k[8] == 'd' || k[8] == 'p' {
				t.Errorf("old index key %q left", k)
				return brain.ErrStop
			}
			return nil
		})
	})
}

// TestNewMigratesSchemaThreeTail: a store with schema-3 tail keys (one index key per
// unfolded turn) is converted when memory is built on it: the keys go, the turns' history
// entries are marked, and search finds the turns (before and after folding) but not
// turns that were never indexed — both for a chat migrated from schema 2 (its high-water
// mark past the tail) and for one whose tail was written by schema 3.
func TestNewMigratesSchemaThreeTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	writeSchemaThree(t, path)

	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{})
	for _, chat := range []int64{11, 12} {
		if n := tailEntries(t, st, chat); n != 90 {
			t.Errorf("chat %d: %d unfolded turns after migration, want 90", chat, n)
		}
		searchesAsBefore(t, m, chat, "migrated")
		if err := m.Maintain(context.Background(), chat); err != nil {
			t.Fatal(err)
		}
		if n := tailEntries(t, st, chat); n != 0 {
			t.Errorf("chat %d: %d unfolded turns after Maintain, want all 90 folded", chat, n)
		}
		searchesAsBefore(t, m, chat, "folded")
		_ = st.View(func(tx *storage.Tx) error {
			return tx.Scan(brain.BucketIndex, brain.ID64(chat), func(k, _ []byte) error {
				if k[8] == 't' {
					t.Errorf("chat %d: schema-3 tail key %q left", chat, k)
					return brain.ErrStop
				}
				return nil
			})
		})
	}
	if from, ok := owed(t, st); ok {
		t.Errorf("the index still owes an upgrade from schema %d", from)
	}
}

// TestStoreAloneKeepsTheIndexOwed: an old store opened by storage alone (`anima
// compact`, `anima dead-letters`: nothing that builds memory) is upgraded
// to the current schema but keeps its index as it was, marked owed an upgrade from the
// old schema, across a compaction and a reopen; memory built on it later migrates the
// index to the same bytes as memory built on it at once (TestMigratedIndexBytes).
func TestStoreAloneKeepsTheIndexOwed(t *testing.T) {
	t.Parallel()
	eachOldFile(t, func(t *testing.T, i int, tc oldFile, st *storage.Store, path string) {
		if from, ok := owed(t, st); !ok || from != i+2 {
			t.Errorf("opened by storage: owed %d, %v; want an upgrade from schema %d", from, ok, i+2)
		}
		oldKeys := func(stage string) {
			t.Helper()
			n := 0
			_ = st.View(func(tx *storage.Tx) error {
				return tx.Scan(brain.BucketIndex, nil, func(k, _ []byte) error {
					if len(k) > 8 && (k[8] == 'd' || k[8] == 't') {
						n++
					}
					return nil
				})
			})
			if want := []int{90, 180}[i]; n != want {
				t.Errorf("%s: %d old-layout index keys, want %d", stage, n, want)
			}
		}
		oldKeys("opened by storage")
		if _, err := st.Compact(); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		st = storagetest.Open(t, path)
		if from, ok := owed(t, st); !ok || from != i+2 {
			t.Errorf("compacted and reopened: owed %d, %v; want an upgrade from schema %d", from, ok, i+2)
		}
		oldKeys("compacted and reopened")

		tc.wantMigrated(t, st)
	})
}

// TestForgetBeforeTheIndexMigrates: Forget on a store whose index is still owed its
// upgrade deletes the chat's old-layout keys with the rest (they are all chat-prefixed),
// and memory built on it afterwards migrates what is left and finds nothing of the chat.
func TestForgetBeforeTheIndexMigrates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	writeSchemaThree(t, path)
	st := storagetest.Open(t, path)
	if err := st.Forget(11); err != nil {
		t.Fatal(err)
	}
	m := newMemory(t, st, nil, memory.Options{})
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(brain.BucketIndex, brain.ID64(11), func(k, _ []byte) error {
			t.Errorf("forgotten chat's index key %q left", k)
			return nil
		})
	})
	if hits, err := m.Search(11, 11, "stolen bicycle", 3); err != nil || len(hits) != 0 {
		t.Errorf("forgotten chat: hits = %+v, %v", hits, err)
	}
	searchesAsBefore(t, m, 12, "migrated")
	if from, ok := owed(t, st); ok {
		t.Errorf("the index still owes an upgrade from schema %d", from)
	}
}

// TestNewRefusesAnUnreadableOwedMark: memory is not built over a store whose owed mark
// it cannot read (it cannot know which layout the index is in).
func TestNewRefusesAnUnreadableOwedMark(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	if err := st.Update(func(tx *storagetest.Tx) error {
		return tx.PutRaw(storage.BucketMeta, storage.OwedKey(brain.PartIndex), []byte("two"))
	}); err != nil {
		t.Fatal(err)
	}
	if m, err := memory.New(st, nil, memory.Options{}); err == nil || m != nil {
		t.Errorf("New = %v, %v; want an error", m, err)
	}
}

// TestForgetUserBeforeTheIndexMigrates: ForgetUser without memory (no unindexer) on a
// store whose index is still owed its upgrade deletes the member's group turns from
// history and leaves the old tail keys; memory built on it afterwards migrates them
// without error (a tail key whose turn is gone marks nothing) and finds none of them.
func TestForgetUserBeforeTheIndexMigrates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	const grp = -300
	st := storagetest.Open(t, path)
	h := bicycleHistory(t, st, grp) // every turn is user 7's
	var seqs []uint64
	for _, tn := range h[:90] {
		seqs = append(seqs, tn.Seq)
	}
	memorytest.OweIndexUpgrade(t, st, grp, seqs...)

	st = storagetest.Open(t, path)
	if rep, err := st.ForgetUser(7, nil); err != nil || rep.Turns != 100 {
		t.Fatalf("ForgetUser = %+v, %v; want 100 turns", rep, err)
	}
	if _, ok := owed(t, st); !ok {
		t.Fatal("ForgetUser settled the index's upgrade")
	}
	m := newMemory(t, st, nil, memory.Options{})
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(brain.BucketIndex, brain.ID64(grp), func(k, _ []byte) error {
			t.Errorf("index key %q left", k)
			return nil
		})
	})
	if hits, err := m.Search(grp, 8, "stolen bicycle", 3); err != nil || len(hits) != 0 {
		t.Errorf("hits = %+v, %v; want none", hits, err)
	}
	if from, ok := owed(t, st); ok {
		t.Errorf("the index still owes an upgrade from schema %d", from)
	}
}
