package loop_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// perceiver is a fakeThinker that perceives: a document gets a notice, anything else is
// "heard" as hello. It records the fetcher it was given and how often it ran.
type perceiver struct {
	*fakeThinker
	mu    sync.Mutex
	runs  int
	fetch brain.MediaFetcher
}

func (p *perceiver) Perceive(_ context.Context, w brain.Wake, f brain.MediaFetcher) brain.Wake {
	p.mu.Lock()
	p.runs++
	p.fetch = f
	p.mu.Unlock()
	sigs := slices.Clone(w.Signals)
	for i := range sigs {
		if sigs[i].Media == nil {
			continue
		}
		m := *sigs[i].Media
		if m.Kind == brain.MediaDocument {
			m.Notice, sigs[i].Text = "I can't open that one.", "[file x.pdf, not read]"
		} else {
			sigs[i].Text = "[voice 0:05] hello"
		}
		sigs[i].Media = &m
	}
	w.Signals = sigs
	return w
}

type nopFetcher struct{}

func (nopFetcher) Fetch(context.Context, brain.Media) ([]byte, string, error) { return nil, "", nil }

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
		h.start()
		sig := h.msg(1, 7, "")
		sig.MessageID = 31
		sig.Media = &brain.Media{Kind: brain.MediaDocument, FileID: "f", Name: "x.pdf"}
		h.submit(sig)
		m := recv(t, h.sender.attempts, "the notice")
		h.stop()
		if m.Text != "I can't open that one." || m.Kind != brain.KindSystem || !m.Plain || m.ReplyTo != 31 {
			t.Errorf("sent %+v, want the notice (system, plain, reply to 31)", m)
		}
		if n := len(h.think.Wakes()); n != 0 {
			t.Errorf("the model was asked %d times about a file it cannot read", n)
		}
		recs := h.journal.Recs()
		if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) || len(recs[0].Turns) != 1 || recs[0].Turns[0].Text != "[file x.pdf, not read]" {
			t.Errorf("records %+v, want signal 1 consumed with the user's turn noted", recs)
		}
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
