package loop_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/loop"
)

func TestLoopDeferIntent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		out := answer(w)
		out.Intents = append(out.Intents, brain.Defer{Chat: w.Chat, Until: t0.Add(48 * time.Hour), Reason: "exams"})
		return out, nil
	}
	h.start()
	h.submit(h.msg(1, 3, "leave me alone this week"))
	a := recv(t, h.agg.acked, "the deferral")
	h.stop()
	want := brain.Ack{Key: brain.AckKey(brain.SignalSocialPressure, 3), Kind: brain.AckDeferred,
		Until: t0.Add(24 * time.Hour), Firm: true, Reason: "exams", At: t0}
	if a.Key != want.Key || a.Kind != want.Kind || !a.Until.Equal(want.Until) || a.Firm != want.Firm ||
		a.Reason != want.Reason || !a.At.Equal(want.At) {
		t.Errorf("ack = %+v, want %+v", a, want)
	}
	if a.Key != aggregation.ProactiveKey(3) {
		t.Errorf("key %q is not the aggregator's proactive key %q", a.Key, aggregation.ProactiveKey(3))
	}
	if got, ok := h.agg.Registry().Get(t0, want.Key); !ok || !got.Firm {
		t.Errorf("registry holds %+v (%v), want the firm deferral", got, ok)
	}
	var persisted bool
	for _, x := range h.store.acks {
		persisted = persisted || x.Key == want.Key
	}
	if !persisted {
		t.Errorf("acks saved on stop %+v, want the deferral among them", h.store.acks)
	}
	recs := h.journal.Recs()
	if len(recs) != 1 || len(recs[0].Intents) != 1 {
		t.Fatalf("records %+v, want the Defer intent recorded", recs)
	}
	if _, ok := recs[0].Intents[0].(brain.Defer); !ok {
		t.Errorf("recorded intent %T, want brain.Defer", recs[0].Intents[0])
	}
}

// pluginIntent is an intent of a kind the core does not know.
type pluginIntent struct{}

func (pluginIntent) IntentName() string { return "plugin_thing" }

// TestLoopUnhandledIntent: an intent of a kind nobody applies is logged, counted and
// dropped; the rest of the turn — its reply and its other intents — goes on.
func TestLoopUnhandledIntent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noProactive())
	reg := h.registry()
	var logs braintest.Buffer
	h.logger = slog.New(slog.NewTextHandler(&logs, nil))
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		out := answer(w)
		out.Intents = append(out.Intents, pluginIntent{}, brain.EmitThought{Chat: w.Chat, Text: "ask about the trip"})
		return out, nil
	}
	h.start()
	h.submit(h.msg(1, 3, "hi"))
	m := recv(t, h.sender.attempts, "the reply")
	h.stop()

	if m.Text != "re: hi" {
		t.Errorf("sent %q, want the reply", m.Text)
	}
	recs := h.journal.Recs()
	if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) {
		t.Fatalf("records %+v, want one consuming signal 1", recs)
	}
	if got := recs[0].Intents; len(got) != 1 || got[0] != (brain.EmitThought{Chat: 3, Text: "ask about the trip"}) {
		t.Errorf("recorded intents %+v, want only the EmitThought", got)
	}
	if len(h.st.Thoughts) != 1 || h.st.Thoughts[0].Text != "ask about the trip" {
		t.Errorf("thoughts %+v, want the emitted thought applied", h.st.Thoughts)
	}
	want := `
# HELP anima_intents_unhandled_total Intents of a kind nobody applies (dropped), by intent name.
# TYPE anima_intents_unhandled_total counter
anima_intents_unhandled_total{intent="plugin_thing"} 1
`
	exposes(t, reg, "anima_intents_unhandled_total", want)
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "intent=plugin_thing") {
		t.Errorf("no error logged for the unhandled intent:\n%s", logs.String())
	}
}

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
