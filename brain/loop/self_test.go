package loop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// TestApplyFromOutside: intents a plugin job's run hands the running loop (Loop.Apply) are
// applied to its state — the self note, a share kept, a share used — and persisted at the
// stop, also those the stop found still waiting; an Apply after the stop is refused.
func TestApplyFromOutside(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.st.Upsert(brain.Relationship{Chat: 1, User: 1})
	h.start()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	exp := t0.Add(48 * time.Hour)
	for _, ins := range [][]brain.Intent{
		{brain.SetSelfNote{Chat: 1, Note: "  the owl  joke "}, brain.ShareLater{Chat: 1, Share: brain.Share{ID: "a", Text: "herons", Expires: exp}}},
		{brain.ShareLater{Chat: 1, Share: brain.Share{ID: "b", Text: "rain", Expires: exp}}, brain.ShareUsed{Chat: 1, ID: "a"}},
		{brain.SetSelfNote{Chat: 99, Note: "nobody's"}}, // no such relationship: nothing happens
	} {
		if err := h.loop.Apply(ctx, ins); err != nil {
			t.Fatal(err)
		}
	}
	h.stop()
	rel := h.st.Rel(1)
	if rel.Note() != "the owl joke" || len(rel.Shares()) != 1 || rel.Shares()[0].ID != "b" {
		t.Errorf("state after Apply: self %q, shares %+v; want the note and share b", rel.Note(), rel.Shares())
	}
	if h.st.Rel(99) != nil {
		t.Error("Apply made a relationship")
	}
	h.store.mu.Lock()
	saved := h.store.rels[1]
	h.store.mu.Unlock()
	if saved.Note() != "the owl joke" || len(saved.Shares()) != 1 {
		t.Errorf("persisted at stop: self %q, shares %+v", saved.Note(), saved.Shares())
	}
	if err := h.loop.Apply(ctx, []brain.Intent{brain.SetSelfNote{Chat: 1, Note: "late"}}); !errors.Is(err, loop.ErrStopped) {
		t.Errorf("Apply after the stop = %v, want ErrStopped", err)
	}
}
