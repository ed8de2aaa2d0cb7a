package storage_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestRelationshipRhythmPersists: a relationship's learned rhythm survives a restart of the
// store, and one saved without a profile comes back with an empty one.
func TestRelationshipRhythmPersists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	s := open(t, path)
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
