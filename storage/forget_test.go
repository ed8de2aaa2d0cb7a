package storage_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// TestOpenMigratesSchemaOneFacts: a schema-1 file keyed facts by user alone; opened by
// this version they are the users' private-chat facts, and the file says schema 2.
func TestOpenMigratesSchemaOneFacts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writeOldFile(t, path, "1", func(tx *bolt.Tx) error {
		facts, err := tx.CreateBucket([]byte(storage.BucketFacts))
		if err != nil {
			return err
		}
		for _, f := range []struct {
			user int64
			attr string
		}{{7, "diagnosis"}, {7, "name"}, {-3, "name"}} {
			v, _ := json.Marshal(brain.Fact{Attribute: f.attr, Value: "v", At: at})
			if err := facts.Put(storage.Key(f.user, []byte(f.attr)), v); err != nil {
				return err
			}
		}
		return nil
	})

	for range 2 { // a second open changes nothing
		s, err := storage.Open(path, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = s.View(func(tx *storage.Tx) error {
			return tx.Scan(storage.BucketFacts, nil, func(k, v []byte) error {
				var f brain.Fact
				if err := json.Unmarshal(v, &f); err != nil {
					return err
				}
				for _, user := range []int64{7, -3} {
					if string(k) == string(storage.FactKey(user, user, f.Attribute)) {
						got = append(got, f.Attribute)
						return nil
					}
				}
				t.Errorf("fact %q under an unexpected key %x", f.Attribute, k)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"diagnosis", "name", "name"}; !slices.Equal(got, want) {
			t.Errorf("migrated facts %q, want %q", got, want)
		}
		var schema string
		_ = s.View(func(tx *storage.Tx) error {
			v, err := tx.GetRaw(storage.BucketMeta, []byte("schema"))
			schema = string(v)
			return err
		})
		if want := strconv.Itoa(storage.SchemaVersion); schema != want {
			t.Errorf("schema %q after migration, want %s", schema, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestForgetUser: the user's private chat goes entirely; in a group only their turns
// (and the answers to them), reminders and facts go, and the report counts them. Other
// members' data stays.
func TestForgetUser(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "anima.db"))
	const ann, ben, grp = 1, 2, -100
	now := time.Now()
	commit := func(chat int64, turns ...brain.Turn) {
		t.Helper()
		if _, err := s.CommitTurn(storage.Commit{Chat: chat, Turns: turns}, now); err != nil {
			t.Fatal(err)
		}
	}
	commit(ann, brain.Turn{Role: "user", Text: "private", User: ann})
	commit(grp, brain.Turn{Role: "user", Text: "ann says", User: ann, Name: "Ann"}, brain.Turn{Role: "assistant", Text: "to ann", User: ann})
	commit(grp, brain.Turn{Role: "user", Text: "ben says", User: ben, Name: "Ben"}, brain.Turn{Role: "assistant", Text: "to ben", User: ben})
	commit(grp, brain.Turn{Role: "user", Text: "old, sender unknown"})
	for _, it := range []brain.ScheduleItem{{ID: "a1", Chat: grp, User: ann}, {ID: "b1", Chat: grp, User: ben}, {ID: "p1", Chat: ann, User: ann}} {
		if err := s.Put(storage.BucketSchedules, storage.Key(it.Chat, []byte(it.ID)), it); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range [][]byte{storage.FactKey(ann, ann, "x"), storage.FactKey(grp, ann, "x"), storage.FactKey(grp, ben, "x")} {
		if err := s.Put(storage.BucketFacts, k, brain.Fact{Attribute: "x", Value: "v"}); err != nil {
			t.Fatal(err)
		}
	}
	var unindexed []uint64
	rep, err := s.ForgetUser(ann, func(_ *storage.Tx, chat int64, seqs []uint64) error {
		if chat != grp {
			t.Errorf("unindex asked for chat %d", chat)
		}
		unindexed = append(unindexed, seqs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := storage.ForgetReport{Chats: []int64{grp}, Turns: 2, Reminders: 1, Facts: 1}
	if !slices.Equal(rep.Chats, want.Chats) || rep.Turns != want.Turns || rep.Reminders != want.Reminders || rep.Facts != want.Facts {
		t.Errorf("report %+v, want %+v", rep, want)
	}
	if len(unindexed) != 2 {
		t.Errorf("unindexed seqs %v, want ann's two group turns", unindexed)
	}
	if h, _ := s.History(ann, 0); len(h) != 0 {
		t.Errorf("private history survived: %+v", h)
	}
	var texts []string
	h, _ := s.History(grp, 0)
	for _, turn := range h {
		texts = append(texts, turn.Text)
	}
	if want := []string{"ben says", "to ben", "old, sender unknown"}; !slices.Equal(texts, want) {
		t.Errorf("group history %q, want %q", texts, want)
	}
	var it brain.ScheduleItem
	for id, keep := range map[string]bool{"a1": false, "b1": true} {
		if ok, _ := s.Get(storage.BucketSchedules, storage.Key(grp, []byte(id)), &it); ok != keep {
			t.Errorf("reminder %s kept = %v, want %v", id, ok, keep)
		}
	}
	var f brain.Fact
	for _, c := range []struct {
		key  []byte
		keep bool
	}{{storage.FactKey(ann, ann, "x"), false}, {storage.FactKey(grp, ann, "x"), false}, {storage.FactKey(grp, ben, "x"), true}} {
		if ok, _ := s.Get(storage.BucketFacts, c.key, &f); ok != c.keep {
			t.Errorf("fact %x kept = %v, want %v", c.key, ok, c.keep)
		}
	}
}
