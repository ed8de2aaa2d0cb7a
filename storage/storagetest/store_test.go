package storagetest_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

// tx is every transaction method memory and schedule use, and OnCommit.
type tx interface {
	memory.Tx
	schedule.Tx
	OnCommit(fn func())
}

// store is a store of either kind, with the methods the conformance test reads through.
type store[T tx] interface {
	View(fn func(tx T) error) error
	Update(fn func(tx T) error) error
	History(chat int64, n int) ([]brain.Turn, error)
	Pending() ([]brain.Signal, error)
}

var (
	_ memory.Store[*storagetest.Tx]   = (*storagetest.Store)(nil)
	_ schedule.Store[*storagetest.Tx] = (*storagetest.Store)(nil)
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// TestConformance runs the same checks on a bbolt file and on the memory-only store: what
// memory's and schedule's tests rely on of the fake is what storage does.
func TestConformance(t *testing.T) {
	t.Parallel()
	t.Run("bbolt", func(t *testing.T) {
		st, err := storage.Open(filepath.Join(t.TempDir(), "anima.db"), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		conformance(t, st, func(chat int64, turns []brain.Turn) error {
			_, err := st.CommitTurn(storage.Commit{Chat: chat, Turns: turns}, t0)
			return err
		})
	})
	t.Run("memory", func(t *testing.T) {
		st := storagetest.New()
		conformance(t, st, func(chat int64, turns []brain.Turn) error {
			return st.Update(func(tx *storagetest.Tx) error {
				_, err := tx.AppendHistory(chat, turns...)
				return err
			})
		})
	})
}

// appender appends turns to chat's history in a commit of its own (storage's history is
// written by CommitTurn).
type appender func(chat int64, turns []brain.Turn) error

func conformance[T tx](t *testing.T, st store[T], appendHistory appender) {
	t.Run("buckets", func(t *testing.T) { buckets(t, st) })
	t.Run("rollback", func(t *testing.T) { rollback(t, st) })
	t.Run("inbox", func(t *testing.T) { inbox(t, st) })
	t.Run("blobs", func(t *testing.T) { blobs(t, st) })
	t.Run("owed", func(t *testing.T) { owed(t, st) })
	t.Run("history", func(t *testing.T) { history(t, st, appendHistory) })
}

func update[T tx](t *testing.T, st store[T], fn func(tx T) error) {
	t.Helper()
	if err := st.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func view[T tx](t *testing.T, st store[T], fn func(tx T) error) {
	t.Helper()
	if err := st.View(fn); err != nil {
		t.Fatal(err)
	}
}

// buckets: values round-trip as JSON and raw bytes, absent keys read as absent, Scan walks
// a prefix in key order and brain.ErrStop ends it, View cannot write.
func buckets[T tx](t *testing.T, st store[T]) {
	const b = brain.BucketFacts
	update(t, st, func(tx T) error {
		for _, k := range []string{"a2", "b1", "a1", "a3", "c"} {
			if err := tx.Put(b, []byte(k), map[string]string{"k": k}); err != nil {
				return err
			}
		}
		if err := tx.PutRaw(b, []byte("raw"), []byte{1, 2}); err != nil {
			return err
		}
		return tx.Delete(b, []byte("c"))
	})
	view(t, st, func(tx T) error {
		var v map[string]string
		if found, err := tx.Get(b, []byte("a1"), &v); err != nil || !found || v["k"] != "a1" {
			t.Errorf("Get a1 = %v, %v, %v", v, found, err)
		}
		if found, err := tx.Get(b, []byte("c"), &v); err != nil || found {
			t.Errorf("Get of a deleted key = %v, %v", found, err)
		}
		if raw, err := tx.GetRaw(b, []byte("raw")); err != nil || !bytes.Equal(raw, []byte{1, 2}) {
			t.Errorf("GetRaw = %v, %v", raw, err)
		}
		if raw, err := tx.GetRaw(b, []byte("none")); err != nil || raw != nil {
			t.Errorf("GetRaw of an absent key = %v, %v", raw, err)
		}
		if raw, err := tx.Peek(b, []byte("raw")); err != nil || !bytes.Equal(raw, []byte{1, 2}) {
			t.Errorf("Peek = %v, %v", raw, err)
		}
		var keys []string
		if err := tx.Scan(b, []byte("a"), func(k, _ []byte) error { keys = append(keys, string(k)); return nil }); err != nil {
			t.Error(err)
		}
		if want := []string{"a1", "a2", "a3"}; !slices.Equal(keys, want) {
			t.Errorf("Scan a = %q, want %q", keys, want)
		}
		keys = nil
		err := tx.Scan(b, nil, func(k, _ []byte) error {
			keys = append(keys, string(k))
			if len(keys) == 2 {
				return brain.ErrStop
			}
			return nil
		})
		if err != nil || !slices.Equal(keys, []string{"a1", "a2"}) {
			t.Errorf("Scan stopped = %q, %v", keys, err)
		}
		errBoom := errors.New("boom")
		if err := tx.Scan(b, nil, func(_, _ []byte) error { return errBoom }); !errors.Is(err, errBoom) {
			t.Errorf("Scan's own error = %v", err)
		}
		if err := tx.Put(b, []byte("x"), 1); err == nil {
			t.Error("Put in View succeeded")
		}
		return nil
	})
}

// rollback: an Update that returns an error leaves nothing of what it wrote, not even
// the inbox's sequence, and runs no OnCommit; one that commits runs them after.
func rollback[T tx](t *testing.T, st store[T]) {
	const b = brain.BucketSchedules
	errBoom := errors.New("boom")
	ran := 0
	err := st.Update(func(tx T) error {
		tx.OnCommit(func() { ran++ })
		if err := tx.Put(b, []byte("k"), 1); err != nil {
			return err
		}
		if _, err := tx.Record(brain.Signal{Type: brain.SignalScheduleDue}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) || ran != 0 {
		t.Fatalf("Update = %v, OnCommit ran %d times", err, ran)
	}
	view(t, st, func(tx T) error {
		if raw, err := tx.GetRaw(b, []byte("k")); err != nil || raw != nil {
			t.Errorf("rolled back Put left %q, %v", raw, err)
		}
		return nil
	})
	if p, err := st.Pending(); err != nil || len(p) != 0 {
		t.Errorf("rolled back Record left %+v, %v", p, err)
	}
	var id uint64
	update(t, st, func(tx T) error {
		tx.OnCommit(func() { ran++ })
		var err error
		id, err = tx.Record(brain.Signal{Type: brain.SignalScheduleDue})
		return err
	})
	if ran != 1 {
		t.Errorf("OnCommit ran %d times after a commit", ran)
	}
	if p, err := st.Pending(); err != nil || len(p) != 1 || p[0].ID != id {
		t.Errorf("inbox = %+v, %v, want the one signal %d", p, err, id)
	}
	update(t, st, func(tx T) error { return tx.Delete(storage.BucketInbox, brain.U64(id)) })
}

// inbox: Record gives each signal the next ID, stored with it, in order.
func inbox[T tx](t *testing.T, st store[T]) {
	var ids []uint64
	update(t, st, func(tx T) error {
		for _, text := range []string{"one", "two"} {
			id, err := tx.Record(brain.Signal{ID: 99, Type: brain.SignalScheduleDue, Chat: 7, Text: text})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	p, err := st.Pending()
	if err != nil || len(p) != 2 || ids[1] <= ids[0] {
		t.Fatalf("inbox = %+v, %v; ids %v", p, err, ids)
	}
	for i, sig := range p {
		if sig.ID != ids[i] || sig.Chat != 7 || sig.Text != []string{"one", "two"}[i] {
			t.Errorf("signal %d = %+v, want ID %d", i, sig, ids[i])
		}
	}
}

// owed: a store owes no upgrade until the meta bucket says so (storage.Open writes the
// mark when it upgrades an old file), Owed reads the schema in it, Settle removes it, and
// a mark that is not a schema is an error.
func owed[T tx](t *testing.T, st store[T]) {
	const part = brain.PartIndex
	check := func(stage string, want int, wantOK bool) {
		t.Helper()
		view(t, st, func(tx T) error {
			if from, ok, err := tx.Owed(part); err != nil || ok != wantOK || from != want {
				t.Errorf("%s: Owed = %d, %v, %v; want %d, %v", stage, from, ok, err, want, wantOK)
			}
			return nil
		})
	}
	check("new", 0, false)
	update(t, st, func(tx T) error { return tx.PutRaw(storage.BucketMeta, storage.OwedKey(part), []byte("3")) })
	check("marked", 3, true)
	update(t, st, func(tx T) error { return tx.Settle(part) })
	check("settled", 0, false)
	update(t, st, func(tx T) error { return tx.PutRaw(storage.BucketMeta, storage.OwedKey(part), []byte("x")) })
	view(t, st, func(tx T) error {
		if _, _, err := tx.Owed(part); err == nil {
			t.Error("Owed read a mark that is not a schema without an error")
		}
		return nil
	})
	update(t, st, func(tx T) error { return tx.Settle(part) })
}

// blobs: a blob replaces what was under its key and goes with DeleteBlob.
func blobs[T tx](t *testing.T, st store[T]) {
	const b = brain.BucketIndex
	key := brain.Key(5, []byte{'g'}, brain.U64(1))
	update(t, st, func(tx T) error {
		if err := tx.PutBlob(b, key, []byte("first")); err != nil {
			return err
		}
		return tx.PutBlob(b, key, bytes.Repeat([]byte("segment"), 2000))
	})
	view(t, st, func(tx T) error {
		if v, err := tx.PeekBlob(b, key); err != nil || len(v) != 14000 {
			t.Errorf("PeekBlob = %d bytes, %v", len(v), err)
		}
		return nil
	})
	update(t, st, func(tx T) error { return tx.DeleteBlob(b, key) })
	view(t, st, func(tx T) error {
		if v, err := tx.PeekBlob(b, key); err != nil || v != nil {
			t.Errorf("PeekBlob after DeleteBlob = %q, %v", v, err)
		}
		return nil
	})
}

// history: entries keyed chat | seq in order, read both ways, from a Seq, one by one, and
// marked indexed once.
func history[T tx](t *testing.T, st store[T], appendHistory appender) {
	const chat = 3
	if err := appendHistory(4, []brain.Turn{{Role: "user", Text: "another chat", At: t0}}); err != nil {
		t.Fatal(err)
	}
	err := appendHistory(chat, []brain.Turn{{Role: "user", Text: "one", At: t0}, {Role: "assistant", Text: "two", At: t0}, {Role: "user", Text: "three", At: t0}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := st.History(chat, 0)
	if err != nil || len(h) != 3 || h[0].Text != "one" || h[2].Text != "three" || h[0].Seq == 0 || h[2].Seq <= h[0].Seq {
		t.Fatalf("History = %+v, %v", h, err)
	}
	if last, err := st.History(chat, 2); err != nil || len(last) != 2 || last[0].Text != "two" {
		t.Errorf("History(2) = %+v, %v", last, err)
	}
	texts := func(tx T, walk func(tx T, fn func(k, v []byte) error) error) []string {
		var out []string
		if err := walk(tx, func(k, v []byte) error {
			turn, _, err := brain.DecodeHistory(v)
			if brain.HistorySeq(k) != turn.Seq {
				t.Errorf("key %x holds Seq %d", k, turn.Seq)
			}
			out = append(out, turn.Text)
			return err
		}); err != nil {
			t.Error(err)
		}
		return out
	}
	view(t, st, func(tx T) error {
		from := func(tx T, fn func(k, v []byte) error) error { return tx.HistoryFrom(chat, h[1].Seq, fn) }
		if got := texts(tx, from); !slices.Equal(got, []string{"two", "three"}) {
			t.Errorf("HistoryFrom = %q", got)
		}
		reverse := func(tx T, fn func(k, v []byte) error) error { return tx.HistoryReverse(chat, fn) }
		if got := texts(tx, reverse); !slices.Equal(got, []string{"three", "two", "one"}) {
			t.Errorf("HistoryReverse = %q", got)
		}
		stop := 0
		if err := tx.HistoryReverse(chat, func(_, _ []byte) error { stop++; return brain.ErrStop }); err != nil || stop != 1 {
			t.Errorf("HistoryReverse stopped after %d, %v", stop, err)
		}
		var turn brain.Turn
		if found, err := tx.HistoryGet(chat, h[1].Seq, &turn); err != nil || !found || turn.Text != "two" {
			t.Errorf("HistoryGet = %+v, %v, %v", turn, found, err)
		}
		if raw, err := tx.HistoryRaw(chat, h[2].Seq+100); err != nil || raw != nil {
			t.Errorf("HistoryRaw of an absent Seq = %q, %v", raw, err)
		}
		return nil
	})
	update(t, st, func(tx T) error {
		for i, want := range []bool{true, false} {
			if ok, err := tx.MarkIndexed(chat, h[0].Seq); err != nil || ok != want {
				t.Errorf("MarkIndexed #%d = %v, %v, want %v", i+1, ok, err, want)
			}
		}
		if ok, err := tx.MarkIndexed(chat, h[2].Seq+100); err != nil || ok {
			t.Errorf("MarkIndexed of an absent Seq = %v, %v", ok, err)
		}
		return nil
	})
	view(t, st, func(tx T) error {
		for i, want := range []bool{true, false} {
			raw, err := tx.HistoryRaw(chat, h[i].Seq)
			if err != nil {
				return err
			}
			turn, marked, err := brain.DecodeHistory(raw)
			if err != nil || marked != want || turn.Text != h[i].Text {
				t.Errorf("entry %d: %+v marked %v, %v; want marked %v", i, turn, marked, err, want)
			}
		}
		return nil
	})
}
