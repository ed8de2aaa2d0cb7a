package storage_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

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
