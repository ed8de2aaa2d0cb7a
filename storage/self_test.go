package storage_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestForgetUserErasesSelfNote: anima's own note about a relationship and the thoughts it
// kept to share live in the relationship's record; ForgetUser erases them with it, and
// once the owed erasure is compacted the raw store file holds neither.
func TestForgetUserErasesSelfNote(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := open(t, path)
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
