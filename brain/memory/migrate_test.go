package memory_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
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
	err := st.Update(func(tx *storage.Tx) error {
		for i, tn := range h[:90] {
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
}

// oldFiles are the old stores the migration tests start from.
var oldFiles = []struct {
	name  string
	write func(t *testing.T, path string)
}{
	{"schema-2", func(t *testing.T, path string) { writeSchemaTwo(t, path, 9) }},
	{"schema-3", writeSchemaThree},
}

// dump lists every key and value of the buckets a migration of the index reads or
// writes (meta, index, history), one line each: bucket, key in hex, value quoted.
func dump(t *testing.T, st *storage.Store) []byte {
	t.Helper()
	var out bytes.Buffer
	err := st.View(func(tx *storage.Tx) error {
		for _, b := range []string{storage.BucketMeta, storage.BucketIndex, storage.BucketHistory} {
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
	for _, tc := range oldFiles {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "anima.db")
			tc.write(t, path)
			st := storagetest.Open(t, path)
			memory.New(st, nil, memory.Options{})
			golden(t, filepath.Join("testdata", "migrated-"+tc.name+".golden"), dump(t, st))
		})
	}
}
