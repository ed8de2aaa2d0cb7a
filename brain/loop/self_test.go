package loop_test

import (
	"context"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// TestApplyFromOutside: intents a plugin job's run hands the running loop (Loop.Apply) are
// applied to its state — the self note, a share kept, a share used — and persisted at the
// stop; an Apply after the loop stopped returns the context's error instead of blocking.
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
	if rel.Self != "the owl joke" || len(rel.Shares) != 1 || rel.Shares[0].ID != "b" {
		t.Errorf("state after Apply: self %q, shares %+v; want the note and share b", rel.Self, rel.Shares)
	}
	if h.st.Rel(99) != nil {
		t.Error("Apply made a relationship")
	}
	h.store.mu.Lock()
	saved := h.store.rels[1]
	h.store.mu.Unlock()
	if saved.Self != "the owl joke" || len(saved.Shares) != 1 {
		t.Errorf("persisted at stop: self %q, shares %+v", saved.Self, saved.Shares)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	for range 20 { // more than the channel holds
		if err := h.loop.Apply(short, []brain.Intent{brain.SetSelfNote{Chat: 1, Note: "late"}}); err != nil {
			return // the stopped loop takes no more: Apply gives up with ctx
		}
	}
	t.Error("Apply never gave up on a stopped loop")
}
