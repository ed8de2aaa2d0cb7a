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

// A chat's turn: commands answered without the model, media perceived before thinking,
// thinking that fails, and the intents a turn returns.

func TestLoopCommands(t *testing.T) {
	t.Parallel()
	t.Run("answered without the model", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.start()
		h.submit(h.command(1, 9, "/status"))
		m := recv(t, h.sender.attempts, "the command's reply")
		h.stop()
		if m.Chat != 9 || m.Text != "ok /status" || m.Kind != brain.KindSystem {
			t.Errorf("sent %+v", m)
		}
		if n := len(h.think.Wakes()); n != 0 {
			t.Errorf("Think called %d times for a command, want 0", n)
		}
		if len(h.cmds.sigs) != 1 || h.cmds.sigs[0].Text != "/status" {
			t.Fatalf("handler saw %+v", h.cmds.sigs)
		}
		if v := h.cmds.views[0]; v.Rel.Chat != 9 || !v.Now.Equal(t0) || v.Loc == nil {
			t.Errorf("view = %+v, want chat 9's relationship, the clock's time and a zone", v)
		}
		recs := h.journal.Recs()
		if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) {
			t.Errorf("records %+v, want one consuming signal 1", recs)
		}
		if !slices.Equal(h.journal.Marked(), []uint64{101}) {
			t.Errorf("marked %v, want [101]", h.journal.Marked())
		}
	})

	t.Run("forget removes the relationship", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cmds.forget = true
		h.st.Upsert(quietRel(9, time.Hour))
		h.st.Upsert(quietRel(10, time.Hour))
		h.st.Thoughts = []brain.Thought{{Chat: 9, Text: "ask about the trip", At: t0, Handled: true}}
		h.start()
		h.submit(h.command(1, 9, "/forget yes"))
		recv(t, h.sender.attempts, "the command's reply")
		h.stop() // waits for the run and applies its result

		if h.st.Rel(9) != nil {
			t.Error("relationship of chat 9 still in memory")
		}
		if h.st.Rel(10) == nil {
			t.Error("relationship of chat 10 was removed too")
		}
		if !slices.Equal(h.store.deleted, []int64{9}) {
			t.Errorf("DeleteRelationship calls %v, want [9]", h.store.deleted)
		}
		if _, ok := h.store.rels[9]; ok {
			t.Error("a flush wrote the forgotten relationship back")
		}
		if len(h.st.Thoughts) != 0 {
			t.Errorf("thoughts of the forgotten chat kept: %+v", h.st.Thoughts)
		}
	})
}

func newMediaHarness(t *testing.T) (*harness, *perceiver) {
	h := newHarness(t, noProactive())
	p := &perceiver{fakeThinker: h.think}
	h.build(thinking(p), func(d *loop.Deps) { d.Media = nopFetcher{} })
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) { return answer(w), nil }
	return h, p
}

func TestPerceptionInTheChatsRun(t *testing.T) {
	t.Parallel()
	t.Run("a voice note is thought about as its transcript and recorded so", func(t *testing.T) {
		h, p := newMediaHarness(t)
		h.start()
		sig := h.msg(1, 7, "")
		sig.Media = &brain.Media{Kind: brain.MediaVoice, FileID: "f", Duration: 5}
		h.submit(sig)
		m := recv(t, h.sender.attempts, "the answer")
		h.stop()
		if m.Text != "re: [voice 0:05] hello" {
			t.Errorf("answer %q, want one from the transcript", m.Text)
		}
		if _, ok := p.fetch.(nopFetcher); !ok || p.runs != 1 {
			t.Errorf("Perceive ran %d times with fetcher %T, want once with the loop's", p.runs, p.fetch)
		}
		recs := h.journal.Recs()
		if len(recs) != 1 || recs[0].Turns[0].Text != "[voice 0:05] hello" {
			t.Errorf("records %+v, want the user's turn as the transcript", recs)
		}
	})

	t.Run("a file that cannot be read gets its notice alone and is recorded", func(t *testing.T) {
		h, _ := newMediaHarness(t)
		sig := h.msg(1, 7, "")
		sig.MessageID = 31
		sig.Media = &brain.Media{Kind: brain.MediaDocument, FileID: "f", Name: "x.pdf"}
		answeredBySystem(t, h, sig, "I can't open that one.")
		if n := len(h.think.Wakes()); n != 0 {
			t.Errorf("the model was asked %d times about a file it cannot read", n)
		}
		wantOnlyUserTurn(t, h.journal.Recs(), "[file x.pdf, not read]")
	})

	t.Run("plain text is not perceived", func(t *testing.T) {
		h, p := newMediaHarness(t)
		h.start()
		h.submit(h.msg(1, 7, "just words"))
		recv(t, h.sender.attempts, "the answer")
		h.stop()
		if p.runs != 0 {
			t.Errorf("Perceive ran %d times for plain text", p.runs)
		}
	})
}

// answeredBySystem runs the loop on the user message sig and checks that the first message
// sent is a plain system message with text, answering sig: the notice or apology a turn
// sends in place of the model's answer.
func answeredBySystem(t *testing.T, h *harness, sig brain.Signal, text string) {
	t.Helper()
	h.start()
	h.submit(sig)
	m := recv(t, h.sender.attempts, "the system reply")
	h.stop()
	if m.Text != text || m.Kind != brain.KindSystem || !m.Plain || m.ReplyTo != sig.MessageID {
		t.Errorf("sent %+v, want %q (system, plain, reply to %d)", m, text, sig.MessageID)
	}
}

// wantOnlyUserTurn checks that the turn was recorded as one record consuming signal 1 with
// the user's turn alone, reading text: nothing the model said.
func wantOnlyUserTurn(t *testing.T, recs []brain.TurnRecord, text string) {
	t.Helper()
	if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) || len(recs[0].Turns) != 1 ||
		recs[0].Turns[0].Role != "user" || recs[0].Turns[0].Text != text {
		t.Errorf("records %+v, want one consuming signal 1 with only the user's turn %q", recs, text)
	}
}

func TestLoopThinkFailures(t *testing.T) {
	t.Parallel()
	t.Run("panic is recovered", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
			if userTexts(w) == "boom" {
				panic("thinker exploded")
			}
			return answer(w), nil
		}
		h.start()
		h.submit(h.msg(1, 7, "boom"))
		recv(t, h.think.entered, "the panicking run")
		h.submit(h.msg(2, 7, "hello"))
		h.submit(h.msg(3, 8, "other chat"))
		for range 3 {
			recv(t, h.sender.attempts, "a message")
		}
		h.stop()
		// The user who wrote is not left in silence, and the loop keeps working.
		if got, want := h.sender.SentTo(7), []string{"sorry, try again", "re: hello"}; !slices.Equal(got, want) {
			t.Errorf("chat 7 got %q, want %q", got, want)
		}
		if got := h.sender.SentTo(8); !slices.Equal(got, []string{"re: other chat"}) {
			t.Errorf("chat 8 got %q", got)
		}
		var done []uint64
		for _, r := range h.journal.Recs() {
			if r.Chat == 7 {
				done = append(done, r.Done...)
			}
		}
		if !slices.Equal(done, []uint64{1, 2}) {
			t.Errorf("chat 7 consumed %v, want [1 2]: a panicking message must not be replayed on every start", done)
		}
	})

	t.Run("error on a user message sends the apology", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.think.script = func(context.Context, brain.Wake) (brain.Outcome, error) {
			return brain.Outcome{}, errors.New("provider down")
		}
		in := h.msg(1, 7, "are you there?")
		in.MessageID = 55
		answeredBySystem(t, h, in, "sorry, try again")
		if n := len(h.sender.Sent()); n != 1 {
			t.Errorf("%d messages sent, want 1", n)
		}
		wantOnlyUserTurn(t, h.journal.Recs(), "are you there?")
	})

	t.Run("error on a proactive wake sends nothing", func(t *testing.T) {
		h := newHarness(t, proactiveAnyTime())
		h.st.Upsert(quietRel(7, 7*time.Hour))
		h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
			if w.Reason.Code == brain.ReasonProactive {
				return brain.Outcome{}, errors.New("provider down")
			}
			return answer(w), nil
		}
		h.start()
		h.submit(nudge())
		if w := recv(t, h.think.entered, "the proactive run"); w.Reason.Code != brain.ReasonProactive || w.Profile != brain.ProfileProactive {
			t.Fatalf("wake reason %q profile %q, want proactive", w.Reason.Code, w.Profile)
		}
		// A later message in the same chat runs after the failed one (per-chat order).
		h.submit(h.msg(1, 7, "hey"))
		m := recv(t, h.sender.attempts, "the reply")
		h.stop()
		if m.Text != "re: hey" {
			t.Errorf("first message sent = %+v, want the reply (nothing for the failed proactive run)", m)
		}
		if n := len(h.sender.Sent()); n != 1 {
			t.Errorf("%d messages sent, want 1", n)
		}
		rel := h.st.Rel(7)
		if !rel.LastProactive.Equal(t0) || rel.ProactiveToday != 1 || rel.UnansweredProactive != 0 {
			t.Errorf("relationship %+v: the failed wake still counts against cooldown, nothing unanswered", *rel)
		}
	})
}

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
