package storage_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestOpenerLedgerIsStoredAndForgotten: the opener ledger is kept with the relationship
// across a reopen, and /forget (ForgetUser) erases it with the rest of the private chat;
// another user's stays.
func TestOpenerLedgerIsStoredAndForgotten(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := open(t, path)
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
