package storage_test

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// TestForgetUser: the user's private chat goes entirely; in a group only their turns
// (and the answers to them), reminders and facts go, and the report counts them. Other
// members' data stays.
func TestForgetUser(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
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
		if err := s.Put(brain.BucketSchedules, brain.Key(it.Chat, []byte(it.ID)), it); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range [][]byte{brain.FactKey(ann, ann, "x"), brain.FactKey(grp, ann, "x"), brain.FactKey(grp, ben, "x")} {
		if err := s.Put(brain.BucketFacts, k, brain.Fact{Attribute: "x", Value: "v"}); err != nil {
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
		if ok, _ := s.Get(brain.BucketSchedules, brain.Key(grp, []byte(id)), &it); ok != keep {
			t.Errorf("reminder %s kept = %v, want %v", id, ok, keep)
		}
	}
	var f brain.Fact
	for _, c := range []struct {
		key  []byte
		keep bool
	}{{brain.FactKey(ann, ann, "x"), false}, {brain.FactKey(grp, ann, "x"), false}, {brain.FactKey(grp, ben, "x"), true}} {
		if ok, _ := s.Get(brain.BucketFacts, c.key, &f); ok != c.keep {
			t.Errorf("fact %x kept = %v, want %v", c.key, ok, c.keep)
		}
	}
}

// TestForgetUserErasesWhatWaits: ForgetUser deletes what waits of the user besides their
// data: the inbox's reactions (each quoting the message reacted to) and due reminders,
// in their private chat and in groups; the outbox's answers to them in a group; the
// private chat's sent ids, stored and waiting for a commit. Their messages waiting in
// the inbox stay (answered after the /forget), and so does everything of other users.
// Neither the store's file, once compacted, nor a backup taken before holds the words.
func TestForgetUserErasesWhatWaits(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	const user, other, group = 1003, 1004, -100
	const marker = "SILVERKEY-4711"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	commitTurns(t, s, user, 2, "my bank pin is "+marker)
	// The user's sent ids: one stored, one waiting for a commit.
	for _, id := range []int{10, 11} {
		if err := s.RecordSent(user, id); err != nil {
			t.Fatal(err)
		}
		if id == 10 {
			if err := s.FlushSent(); err != nil {
				t.Fatal(err)
			}
		}
	}
	sigs := []brain.Signal{
		{Type: brain.SignalReaction, Chat: user, User: user, Text: "❤", Detail: "echo: my bank pin is " + marker, MessageID: 10, At: at},
		{Type: brain.SignalReaction, Chat: user, User: user, Text: "👍", Detail: "echo: again " + marker, MessageID: 11, At: at},
		{Type: brain.SignalScheduleDue, Chat: user, User: user, Text: "change the pin " + marker, At: at},
		{Type: brain.SignalScheduleDue, Chat: group, User: user, Text: "tell them " + marker, At: at},
		{Type: brain.SignalUserMessage, Chat: user, User: user, Text: "after the forget", At: at},
		{Type: brain.SignalReaction, Chat: other, User: other, Text: "❤", Detail: "theirs", MessageID: 10, At: at},
		{Type: brain.SignalScheduleDue, Chat: group, User: other, Text: "the other's reminder", At: at},
		// Recorded in a group and not yet answered: theirs go, the other member's stay.
		{Type: brain.SignalUserMessage, Chat: group, User: user, Text: "in the group, " + marker, At: at},
		{Type: brain.SignalUserMessage, Chat: group, User: user, Media: &brain.Media{Kind: brain.MediaVoice, FileID: marker, Duration: 3}, At: at},
		{Type: brain.SignalUserMessage, Chat: group, User: other, Text: "the other's group message", At: at},
	}
	if _, err := s.Record("telegram", sigs, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitTurn(storage.Commit{Chat: group, User: user, Outbox: []brain.SendMessage{{Chat: group, Text: "you said " + marker},
		{Chat: group, Text: "spoken", Voice: &brain.Voice{Audio: []byte("OggS audio of " + marker), Bytes: 22}}}}, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitTurn(storage.Commit{Chat: group, User: other, Outbox: []brain.SendMessage{{Chat: group, Text: "to the other"}}}, at); err != nil {
		t.Fatal(err)
	}

	if _, err := s.ForgetUser(user, nil); err != nil {
		t.Fatal(err)
	}
	pending, err := s.Pending()
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, p := range pending {
		kept = append(kept, fmt.Sprintf("%s %d %s", p.Type, p.User, p.Text))
	}
	want := []string{"user_message 1003 after the forget", "reaction 1004 ❤", "schedule_due 1004 the other's reminder", "user_message 1004 the other's group message"}
	if !slices.Equal(kept, want) {
		t.Errorf("inbox after ForgetUser = %q, want %q", kept, want)
	}
	out := outboxOf(t, s)
	if len(out) != 1 || out[0].User != other {
		t.Errorf("outbox after ForgetUser = %+v, want the other user's entry alone", out)
	}
	for _, id := range []int{10, 11} {
		if sent, err := s.Sent(user, id); err != nil || sent {
			t.Errorf("Sent(%d, %d) = %v, %v after ForgetUser; want false", user, id, sent, err)
		}
	}
	var backup bytes.Buffer
	if _, err := s.WriteTo(&backup); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(backup.Bytes(), []byte(marker)); n != 0 {
		t.Errorf("a backup taken before the compaction holds the forgotten words %d times", n)
	}
	// The next commits must not write the waiting id back.
	if err := s.FlushSent(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte(marker)); n != 0 {
		t.Errorf("the compacted file holds the forgotten words %d times", n)
	}
	s = open(t, path)
	for _, id := range []int{10, 11} {
		if sent, err := s.Sent(user, id); err != nil || sent {
			t.Errorf("after reopen: Sent(%d, %d) = %v, %v; want false", user, id, sent, err)
		}
	}
}

// TestRecordAfterForgetTakesNoReactionToAnEarlierMessage forces the interleaving that
// kept a reaction after /forget: the channel asks Sent about the reacted message before
// the erasure (true: anima sent it) and records the reaction, quoting the message, after
// it. Record leaves it out; a reaction to a message sent after the erasure, and one in a
// chat never forgotten, are recorded.
func TestRecordAfterForgetTakesNoReactionToAnEarlierMessage(t *testing.T) {
	t.Parallel()
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) {
			t.Parallel()
			s, _ := openTemp(t)
			const user = 1003
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			commitTurns(t, s, user, 1, "my bank pin is SILVERKEY 4711")
			if err := s.RecordSent(user, 20); err != nil {
				t.Fatal(err)
			}
			if stored {
				if err := s.FlushSent(); err != nil {
					t.Fatal(err)
				}
			}
			// 1. The channel classifies the reaction: anima sent message 20.
			if sent, err := s.Sent(user, 20); err != nil || !sent {
				t.Fatalf("Sent before the forget = %v, %v; want true", sent, err)
			}
			// 2. The erasure commits.
			if _, err := s.ForgetUser(user, nil); err != nil {
				t.Fatal(err)
			}
			// 3. The channel records what it classified; and anima writes again.
			if err := s.RecordSent(user, 21); err != nil {
				t.Fatal(err)
			}
			reaction := func(chat int64, msg int, detail string) brain.Signal {
				return brain.Signal{Type: brain.SignalReaction, Chat: chat, User: chat, Text: "❤", Detail: detail, MessageID: msg, At: at}
			}
			got, err := s.Record("telegram", []brain.Signal{
				reaction(user, 20, "echo: my bank pin is SILVERKEY 4711"),
				reaction(user, 21, "Done. I have deleted everything"),
				reaction(2000, 5, "a chat never forgotten"),
			}, 0)
			if err != nil {
				t.Fatal(err)
			}
			pending, err := s.Pending()
			if err != nil {
				t.Fatal(err)
			}
			for _, list := range [][]brain.Signal{got, pending} {
				var details []string
				for _, sig := range list {
					details = append(details, sig.Detail)
				}
				if want := []string{"Done. I have deleted everything", "a chat never forgotten"}; !slices.Equal(details, want) {
					t.Errorf("recorded reactions = %q, want %q", details, want)
				}
			}
			for _, sig := range got {
				if sig.ID == 0 {
					t.Errorf("a recorded signal has no id: %+v", sig)
				}
			}
		})
	}
}

// TestRelationshipRhythmPersists: a relationship's learned rhythm survives a restart of the
// store, and one saved without a profile comes back with an empty one.
func TestRelationshipRhythmPersists(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	var r brain.Rhythm
	start := time.Date(2026, 3, 2, 21, 30, 0, 0, time.UTC)
	for d := range 10 {
		r.Observe(start.AddDate(0, 0, d), time.UTC)
		r.Observe(start.AddDate(0, 0, d).Add(time.Hour), time.UTC)
	}
	if err := s.SaveRelationships([]brain.Relationship{{Chat: 1, User: 1, Rhythm: r}, {Chat: 2, User: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	rels, err := s.Relationships()
	if err != nil || len(rels) != 2 {
		t.Fatalf("relationships %v, %v", rels, err)
	}
	got := rels[0].Rhythm
	if got.Weights != r.Weights || got.ActiveMask != r.ActiveMask || got.Messages != 20 || !got.Ready() ||
		!got.Active(start.AddDate(0, 0, 12), time.UTC) {
		t.Errorf("rhythm after a restart: %d messages, ready %v; want the one saved", got.Messages, got.Ready())
	}
	if rels[1].Rhythm.Ready() || rels[1].Rhythm.Messages != 0 {
		t.Errorf("relationship saved without a profile has %+v", rels[1].Rhythm)
	}
}

// TestOpenerLedgerIsStoredAndForgotten: the opener ledger is kept with the relationship
// across a reopen, and /forget (ForgetUser) erases it with the rest of the private chat;
// another user's stays.
func TestOpenerLedgerIsStoredAndForgotten(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	const ann, ben = 1, 2
	at := time.Date(2026, 3, 3, 19, 10, 0, 0, time.UTC)
	rels := make([]brain.Relationship, 0, 2)
	for _, chat := range []int64{ann, ben} {
		r := brain.Relationship{Chat: chat, User: chat}
		r.RecordOpener(brain.Opener{Kind: brain.OpenerCheckin, Topic: "her driving test", Subject: "checkin:c1", At: at})
		r.MarkUserMessage(at.Add(40 * time.Minute))
		rels = append(rels, r)
	}
	if err := s.SaveRelationships(rels); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	got := openers(t, s)
	want := brain.Opener{Kind: brain.OpenerCheckin, Topic: "her driving test", Subject: "checkin:c1", At: at, Answered: at.Add(40 * time.Minute)}
	if len(got[ann]) != 1 || !got[ann][0].At.Equal(want.At) || !got[ann][0].Answered.Equal(want.Answered) ||
		got[ann][0].Topic != want.Topic || got[ann][0].Kind != want.Kind || got[ann][0].Subject != want.Subject {
		t.Fatalf("stored ledger %+v, want [%+v]", got[ann], want)
	}
	if _, err := s.ForgetUser(ann, nil); err != nil {
		t.Fatal(err)
	}
	got = openers(t, s)
	if l, ok := got[ann]; ok {
		t.Errorf("after /forget the ledger is still there: %+v", l)
	}
	if len(got[ben]) != 1 {
		t.Errorf("another user's ledger went too: %+v", got[ben])
	}
}

// openers is every stored relationship's ledger, by chat.
func openers(t *testing.T, s interface {
	Relationships() ([]brain.Relationship, error)
}) map[int64][]brain.Opener {
	t.Helper()
	rels, err := s.Relationships()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int64][]brain.Opener{}
	for _, r := range rels {
		m[r.Chat] = r.Openers
	}
	return m
}

// TestForgetUserErasesSelfNote: anima's own note about a relationship and the thoughts it
// kept to share live in the relationship's record; ForgetUser erases them with it, and
// once the owed erasure is compacted the raw store file holds neither.
func TestForgetUserErasesSelfNote(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	const note, share = "selfnotemarker: Sam calls me the owl", "sharemarker: herons are patient"
	at := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	rel := brain.Relationship{Chat: 7, User: 7, Self: &brain.Self{Note: note,
		Shares: []brain.Share{{ID: "a1", Text: share, TiedTo: "sharemarker lessons", At: at, Expires: at.Add(72 * time.Hour)}}}}
	if err := s.SaveRelationships([]brain.Relationship{rel, {Chat: 8, User: 8, Self: &brain.Self{Note: "another person's note"}}}); err != nil {
		t.Fatal(err)
	}
	rels, err := s.Relationships()
	if err != nil || len(rels) != 2 || rels[0].Note() != note || len(rels[0].Shares()) != 1 || rels[0].Shares()[0].Text != share {
		t.Fatalf("relationships read back: %+v, %v", rels, err)
	}
	if _, err := s.ForgetUser(7, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if rels, err = s.Relationships(); err != nil || len(rels) != 1 || rels[0].Note() != "another person's note" {
		t.Errorf("after forgetting 7: %+v, %v; want only 8's, note kept", rels, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"selfnotemarker", "sharemarker"} {
		if n := bytes.Count(raw, []byte(marker)); n != 0 {
			t.Errorf("the raw store file holds %q %d times after ForgetUser", marker, n)
		}
	}
	if bytes.Count(raw, []byte("another person's note")) == 0 {
		t.Error("the scan cannot see a note that is there: it proves nothing")
	}
}
