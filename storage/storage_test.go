package storage_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// open opens the store at path with the default options; it is closed when the test ends.
func open(t *testing.T, path string) *storage.Store {
	t.Helper()
	return openWith(t, path, storage.Options{})
}

// openWith opens the store at path with opts; it is closed when the test (or benchmark)
// ends, a second Close being harmless to one the test closed itself.
func openWith(t testing.TB, path string, opts storage.Options) *storage.Store {
	t.Helper()
	s, err := storage.Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openTemp opens a new store with the default options in the test's own folder and
// returns it with its path.
func openTemp(t *testing.T) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "anima.db")
	return open(t, path), path
}

// outboxOf is s's PendingOutbox, failing the test on an error.
func outboxOf(t *testing.T, s *storage.Store) []brain.Outgoing {
	t.Helper()
	out, err := s.PendingOutbox()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFileModeAndSecondInstance(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "anima.db")
	open(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	start := time.Now()
	_, err = storage.Open(path, storage.Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("second open: err = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second open took %v; it must fail fast", d)
	}
}

func TestRecordOffsetAndCommit(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	sigs, err := s.Record("telegram", []brain.Signal{
		{Type: brain.SignalUserMessage, Chat: 7, User: 7, Text: "hi"},
		{Type: brain.SignalUserMessage, Chat: 8, User: 8, Text: "yo"},
	}, 101)
	if err != nil {
		t.Fatal(err)
	}
	if sigs[0].ID == 0 || sigs[1].ID <= sigs[0].ID {
		t.Fatalf("ids not assigned in order: %d %d", sigs[0].ID, sigs[1].ID)
	}
	if off, _ := s.Offset("telegram"); off != 101 {
		t.Fatalf("offset = %d, want 101", off)
	}
	// The offset is set as given, also lower (Telegram re-bases ids after a quiet week);
	// 0 leaves it alone (the console has no offset).
	if _, err := s.Record("telegram", nil, 50); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record("telegram", nil, 0); err != nil {
		t.Fatal(err)
	}
	if off, _ := s.Offset("telegram"); off != 50 {
		t.Fatalf("offset = %d, want 50", off)
	}
	if _, err := s.Record("telegram", nil, 101); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rel := brain.Relationship{Chat: 7, User: 7, LastUserMsg: now}
	entries, err := s.CommitTurn(storage.Commit{
		Done:   []uint64{sigs[0].ID},
		Chat:   7,
		Turns:  []brain.Turn{{Role: "user", Text: "hi", At: now}, {Role: "assistant", Text: "hello", At: now}},
		Outbox: []brain.SendMessage{{Chat: 7, Text: "hello", Kind: brain.KindReply}},
		Rel:    &rel,
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Msg.Text != "hello" {
		t.Fatalf("entries = %+v", entries)
	}
	_ = s.Close()

	// Everything survives a reopen.
	s = open(t, path)
	pending, err := s.Pending()
	if err != nil || len(pending) != 1 || pending[0].Text != "yo" {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	out, err := s.PendingOutbox()
	if err != nil || len(out) != 1 {
		t.Fatalf("outbox = %+v, %v", out, err)
	}
	resumed := out[0].Msg
	resumed.SkipParts = 2
	if err := s.UpdateOutbox(out[0].ID, resumed); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.PendingOutbox(); len(again) != 1 || again[0].Msg.SkipParts != 2 || again[0].ID != out[0].ID {
		t.Fatalf("after UpdateOutbox: %+v", again)
	}
	if err := s.MarkSent(out[0].ID); err != nil {
		t.Fatal(err)
	}
	if out, _ := s.PendingOutbox(); len(out) != 0 {
		t.Fatalf("outbox after MarkSent = %+v", out)
	}
	h, err := s.History(7, 1)
	if err != nil || len(h) != 1 || h[0].Text != "hello" {
		t.Fatalf("history(1) = %+v, %v", h, err)
	}
	h, _ = s.History(7, 0)
	if len(h) != 2 || h[0].Text != "hi" {
		t.Fatalf("history = %+v", h)
	}
	rels, _ := s.Relationships()
	if len(rels) != 1 || !rels[0].LastUserMsg.Equal(now) {
		t.Fatalf("relationships = %+v", rels)
	}
}

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
		history := func() ([]brain.Turn, error) { return s.History(chat, 0) }
		return listed(t, history, func(tu brain.Turn) (string, bool) { return tu.Text, true })
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

func TestForget(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	now := time.Now()
	for _, chat := range []int64{7, 8} {
		rel := brain.Relationship{Chat: chat, User: chat}
		if _, err := s.CommitTurn(storage.Commit{Chat: chat, Turns: []brain.Turn{{Role: "user", Text: "x"}}, Rel: &rel,
			Outbox: []brain.SendMessage{{Chat: chat, Text: "y"}}}, now); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(brain.BucketFacts, brain.Key(chat, []byte("name")), brain.Fact{Attribute: "name", Value: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveAcks([]brain.Ack{{Key: brain.AckKey(brain.SignalSocialPressure, 7)}, {Key: brain.AckKey(brain.SignalSocialPressure, 8)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(7); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.History(7, 0); len(h) != 0 {
		t.Errorf("history of 7 survived: %+v", h)
	}
	if h, _ := s.History(8, 0); len(h) != 1 {
		t.Errorf("history of 8 lost: %+v", h)
	}
	var f brain.Fact
	if ok, _ := s.Get(brain.BucketFacts, brain.Key(7, []byte("name")), &f); ok {
		t.Error("fact of 7 survived")
	}
	if ok, _ := s.Get(brain.BucketFacts, brain.Key(8, []byte("name")), &f); !ok {
		t.Error("fact of 8 lost")
	}
	acks, _ := s.Acks()
	if len(acks) != 1 || acks[0].Key != "social_pressure:8" {
		t.Errorf("acks = %+v", acks)
	}
	out, _ := s.PendingOutbox()
	if len(out) != 1 || out[0].Msg.Chat != 8 {
		t.Errorf("outbox = %+v", out)
	}
	rels, _ := s.Relationships()
	if len(rels) != 1 || rels[0].Chat != 8 {
		t.Errorf("relationships = %+v", rels)
	}
}

func TestBackupRestores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "anima.db"))
	if _, err := s.Record("telegram", []brain.Signal{{Type: brain.SignalUserMessage, Chat: 1, Text: "keep me"}}, 9); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c := open(t, copyPath)
	p, err := c.Pending()
	if err != nil || len(p) != 1 || p[0].Text != "keep me" {
		t.Fatalf("restored pending = %+v, %v", p, err)
	}
	if off, _ := c.Offset("telegram"); off != 9 {
		t.Fatalf("restored offset = %d", off)
	}
}

func TestWriteSizedToAnnouncesTheSize(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	var buf bytes.Buffer
	n, err := s.WriteSizedTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := bytes.Cut(buf.Bytes(), []byte("\n"))
	if !ok || string(header) != strconv.FormatInt(n, 10) || int64(len(body)) != n {
		t.Fatalf("header %q, %d bytes after it, WriteSizedTo said %d", header, len(body), n)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if err := s.Update(func(tx *storage.Tx) error { return tx.PutRaw(storage.BucketMeta, []byte("schema"), []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := storage.Open(path, storage.Options{}); !errors.Is(err, storage.ErrSchema) {
		t.Fatalf("err = %v, want ErrSchema", err)
	}
}

func TestScanReverseAndPrefix(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	err := s.Update(func(tx *storage.Tx) error {
		for _, chat := range []int64{-5, 5, 6} {
			for i := uint64(1); i <= 3; i++ {
				if err := tx.Put(storage.BucketHistory, brain.Key(chat, brain.U64(i)), brain.Turn{Text: "t"}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, chat := range []int64{-5, 5, 6} {
		h, err := s.History(chat, 0)
		if err != nil || len(h) != 3 {
			t.Errorf("chat %d: %d turns, %v", chat, len(h), err)
		}
	}
}

func BenchmarkRecordAndCommit(b *testing.B) {
	s := openWith(b, filepath.Join(b.TempDir(), "anima.db"), storage.Options{})
	now := time.Now()
	for b.Loop() {
		sigs, err := s.Record("telegram", []brain.Signal{{Type: brain.SignalUserMessage, Chat: 1, Text: "hello there"}}, 1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.CommitTurn(storage.Commit{Done: []uint64{sigs[0].ID}, Chat: 1,
			Turns: []brain.Turn{{Role: "user", Text: "hello there"}}, Outbox: []brain.SendMessage{{Chat: 1, Text: "hi"}}}, now); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSentIsBoundedPerChat: the store remembers the last SentKeep ids anima sent per
// chat, forgets older ones, and keeps chats apart.
func TestSentIsBoundedPerChat(t *testing.T) {
	t.Parallel()
	st := openWith(t, filepath.Join(t.TempDir(), "a.db"), storage.Options{})
	for id := 1; id <= storage.SentKeep+10; id++ {
		if err := st.RecordSent(7, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RecordSent(8, 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		chat int64
		id   int
		want bool
	}{{7, 1, false}, {7, 10, false}, {7, 11, true}, {7, storage.SentKeep + 10, true}, {7, storage.SentKeep + 11, false}, {8, 3, true}, {8, 11, false}} {
		got, err := st.Sent(tc.chat, tc.id)
		if err != nil || got != tc.want {
			t.Errorf("Sent(%d, %d) = %v, %v; want %v", tc.chat, tc.id, got, err, tc.want)
		}
	}
	if err := st.Forget(7); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Sent(7, 11); got {
		t.Error("Forget left the chat's sent ids")
	}
}

// listed is what keep makes of each item that list returns and keep keeps, in order; a
// failed list fails t.
func listed[T, V any](t *testing.T, list func() ([]T, error), keep func(T) (V, bool)) []V {
	t.Helper()
	items, err := list()
	if err != nil {
		t.Fatal(err)
	}
	var out []V
	for _, it := range items {
		if v, ok := keep(it); ok {
			out = append(out, v)
		}
	}
	return out
}

// writeOldFile writes, at path, a bbolt file whose meta bucket says schema and whose other
// buckets fill makes, as an older anima left it.
func writeOldFile(t *testing.T, path, schema string, fill func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket([]byte(storage.BucketMeta))
		if err != nil {
			return err
		}
		if err := meta.Put([]byte("schema"), []byte(schema)); err != nil {
			return err
		}
		return fill(tx)
	})
	if err = errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestOpenMigratesSchemaOneFacts: a schema-1 file keyed facts by user alone; opened by
// this version they are the users' private-chat facts, and the file says schema 2.
func TestOpenMigratesSchemaOneFacts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writeOldFile(t, path, "1", func(tx *bolt.Tx) error {
		facts, err := tx.CreateBucket([]byte(brain.BucketFacts))
		if err != nil {
			return err
		}
		for _, f := range []struct {
			user int64
			attr string
		}{{7, "diagnosis"}, {7, "name"}, {-3, "name"}} {
			v, _ := json.Marshal(brain.Fact{Attribute: f.attr, Value: "v", At: at})
			if err := facts.Put(brain.Key(f.user, []byte(f.attr)), v); err != nil {
				return err
			}
		}
		return nil
	})

	for range 2 { // a second open changes nothing
		s := openWith(t, path, storage.Options{})
		var got []string
		err := s.View(func(tx *storage.Tx) error {
			return tx.Scan(brain.BucketFacts, nil, func(k, v []byte) error {
				var f brain.Fact
				if err := json.Unmarshal(v, &f); err != nil {
					return err
				}
				for _, user := range []int64{7, -3} {
					if string(k) == string(brain.FactKey(user, user, f.Attribute)) {
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

// TestOpenMigratesSentIDsToLists: a schema-4 file kept a key per sent id; opened by this
// version each chat's ids are one list, the latest SentKeep of them, and lookups agree.
func TestOpenMigratesSentIDsToLists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	writeOldFile(t, path, "4", func(tx *bolt.Tx) error {
		sent, err := tx.CreateBucket([]byte(storage.BucketSent))
		if err != nil {
			return err
		}
		for id := 1; id <= storage.SentKeep+5; id++ {
			if err := sent.Put(brain.Key(7, brain.U64(uint64(id))), []byte{1}); err != nil {
				return err
			}
		}
		return sent.Put(brain.Key(-2, brain.U64(40)), []byte{1})
	})
	st := openWith(t, path, storage.Options{})
	for _, tc := range []struct {
		chat int64
		id   int
		want bool
	}{{7, 5, false}, {7, 6, true}, {7, storage.SentKeep + 5, true}, {-2, 40, true}, {-2, 41, false}} {
		if got, err := st.Sent(tc.chat, tc.id); err != nil || got != tc.want {
			t.Errorf("Sent(%d, %d) = %v, %v after migration; want %v", tc.chat, tc.id, got, err, tc.want)
		}
	}
	keys := 0
	_ = st.View(func(tx *storage.Tx) error {
		return tx.Scan(storage.BucketSent, nil, func(_, _ []byte) error { keys++; return nil })
	})
	if keys != 2 {
		t.Errorf("sent bucket has %d keys after migration, want one list per chat (2)", keys)
	}
}

// TestOpenMarksTheIndexOwed: opening a file older than schema 4 leaves memory's index as
// it is and marks it owed an upgrade from the file's schema (memory runs it, see
// brain/memory/migrate.go); a newer file or a new one owes nothing, and Settle clears the
// mark with its commit.
func TestOpenMarksTheIndexOwed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		schema string // "" for a new file
		owed   bool
	}{{"", false}, {"1", true}, {"2", true}, {"3", true}, {"4", false}, {"5", false}} {
		name := "schema " + tc.schema
		if tc.schema == "" {
			name = "new file"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "anima.db")
			index := brain.Key(9, []byte{'d'}, brain.U64(1)) // a schema-2 key
			if tc.schema != "" {
				writeOldFile(t, path, tc.schema, func(tx *bolt.Tx) error {
					b, err := tx.CreateBucket([]byte(brain.BucketIndex))
					if err != nil {
						return err
					}
					return b.Put(index, []byte(`{"seq":1}`))
				})
			}
			st := open(t, path)
			owed := func() (int, bool) {
				t.Helper()
				var from int
				var ok bool
				if err := st.View(func(tx *storage.Tx) error {
					var err error
					from, ok, err = tx.Owed(brain.PartIndex)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return from, ok
			}
			from, ok := owed()
			if want, _ := strconv.Atoi(tc.schema); ok != tc.owed || (ok && from != want) {
				t.Fatalf("Owed = %d, %v; want %v from %d", from, ok, tc.owed, want)
			}
			if tc.schema != "" {
				if v, err := st.Get(brain.BucketIndex, index, new(json.RawMessage)); err != nil || !v {
					t.Errorf("the index key is gone after Open: %v, %v", v, err)
				}
			}
			if err := st.Update(func(tx *storage.Tx) error { return tx.Settle(brain.PartIndex) }); err != nil {
				t.Fatal(err)
			}
			if from, ok := owed(); ok {
				t.Errorf("Owed = %d, %v after Settle", from, ok)
			}
		})
	}
}
