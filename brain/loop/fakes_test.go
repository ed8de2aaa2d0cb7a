package loop_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/loop"
)

// cloned is a copy of *s taken under mu: what a test reads of a fake the loop's goroutines
// may still be writing.
func cloned[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*s)
}

// fakeThinker records wakes and answers each user message with "re: <texts>". It can gate
// runs until the test releases them, and a script can replace the answer.
type fakeThinker struct {
	// Set before the loop starts.
	gate     chan struct{}           // when set, each Think takes one token (or ends with ctx)
	gateChat map[int64]chan struct{} // per-chat gates, preferred over gate
	script   func(ctx context.Context, w brain.Wake) (brain.Outcome, error)
	entered  chan brain.Wake // every wake, as Think starts

	mu       sync.Mutex
	wakes    []brain.Wake
	inflight int
	maxIn    int
	perChat  map[int64]int
	overlap  bool // two runs of one chat at once
	canceled int  // runs that ended because their context did
}

func newFakeThinker() *fakeThinker {
	return &fakeThinker{gateChat: map[int64]chan struct{}{}, entered: make(chan brain.Wake, 1024), perChat: map[int64]int{}}
}

func (f *fakeThinker) Think(ctx context.Context, w brain.Wake) (brain.Outcome, error) {
	f.mu.Lock()
	f.wakes = append(f.wakes, w)
	f.inflight++
	f.maxIn = max(f.maxIn, f.inflight)
	f.perChat[w.Chat]++
	if f.perChat[w.Chat] > 1 {
		f.overlap = true
	}
	gate := f.gateChat[w.Chat]
	if gate == nil {
		gate = f.gate
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.perChat[w.Chat]--
		f.mu.Unlock()
	}()
	f.entered <- w
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			f.mu.Lock()
			f.canceled++
			f.mu.Unlock()
			return brain.Outcome{}, fmt.Errorf("think: %w", ctx.Err())
		}
	}
	if f.script != nil {
		return f.script(ctx, w)
	}
	return answer(w), nil
}

func (f *fakeThinker) Wakes() []brain.Wake { return cloned(&f.mu, &f.wakes) }

// answer is the default outcome: one reply naming the user messages it answers.
func answer(w brain.Wake) brain.Outcome {
	return brain.Outcome{Status: brain.StatusActive, Intents: []brain.Intent{
		brain.SendMessage{Chat: w.Chat, Text: "re: " + userTexts(w), Kind: brain.KindReply},
	}}
}

func userTexts(w brain.Wake) string {
	var texts []string
	for _, s := range w.Signals {
		if s.Type == brain.SignalUserMessage {
			texts = append(texts, s.Text)
		}
	}
	return strings.Join(texts, "|")
}

func signalIDs(w brain.Wake) []uint64 {
	var ids []uint64
	for _, s := range w.Signals {
		ids = append(ids, s.ID)
	}
	return ids
}

// fakeJournal is an in-memory loop.Journal.
type fakeJournal struct {
	commits chan brain.TurnRecord

	mu      sync.Mutex
	nextID  uint64
	recs    []brain.TurnRecord
	turns   map[int64][]brain.Turn
	marked  []uint64
	updated map[uint64]brain.SendMessage // UpdateOutbox calls
}

func newFakeJournal() *fakeJournal {
	return &fakeJournal{commits: make(chan brain.TurnRecord, 1024), turns: map[int64][]brain.Turn{}, nextID: 100}
}

func (j *fakeJournal) Commit(_ context.Context, rec brain.TurnRecord) ([]brain.Outgoing, error) {
	j.mu.Lock()
	var out []brain.Outgoing
	for _, m := range rec.Outbox {
		j.nextID++
		out = append(out, brain.Outgoing{ID: j.nextID, Msg: m, User: rec.User})
	}
	j.recs = append(j.recs, rec)
	j.turns[rec.Chat] = append(j.turns[rec.Chat], rec.Turns...)
	j.mu.Unlock()
	j.commits <- rec
	return out, nil
}

func (j *fakeJournal) UpdateOutbox(id uint64, m brain.SendMessage) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.updated == nil {
		j.updated = map[uint64]brain.SendMessage{}
	}
	j.updated[id] = m
	return nil
}

func (j *fakeJournal) MarkSent(id uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.marked = append(j.marked, id)
	return nil
}

func (j *fakeJournal) Recent(chat int64, n int) ([]brain.Turn, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	ts := j.turns[chat]
	if len(ts) > n {
		ts = ts[len(ts)-n:]
	}
	return slices.Clone(ts), nil
}

func (j *fakeJournal) Recs() []brain.TurnRecord { return cloned(&j.mu, &j.recs) }

func (j *fakeJournal) Marked() []uint64 { return cloned(&j.mu, &j.marked) }

// fakeSender records deliveries; fail, when set, decides a send's error.
type fakeSender struct {
	fail     func(m brain.SendMessage) error
	attempts chan brain.SendMessage

	mu   sync.Mutex
	sent []brain.SendMessage
}

func newFakeSender() *fakeSender { return &fakeSender{attempts: make(chan brain.SendMessage, 1024)} }

func (s *fakeSender) Send(_ context.Context, m brain.SendMessage) error {
	var err error
	if s.fail != nil {
		err = s.fail(m)
	}
	if err == nil {
		s.mu.Lock()
		s.sent = append(s.sent, m)
		s.mu.Unlock()
	}
	s.attempts <- m
	return err
}

func (s *fakeSender) Sent() []brain.SendMessage { return cloned(&s.mu, &s.sent) }

func (s *fakeSender) SentTo(chat int64) []string {
	var out []string
	for _, m := range s.Sent() {
		if m.Chat == chat {
			out = append(out, m.Text)
		}
	}
	return out
}

// fakeCommands answers every command with "ok <text>"; forget makes it report a /forget.
type fakeCommands struct {
	forget  bool
	intents []brain.Intent // every command's effects

	mu    sync.Mutex
	sigs  []brain.Signal
	views []loop.CommandView
}

func (c *fakeCommands) Command(_ context.Context, sig brain.Signal, view loop.CommandView) (loop.CommandResult, error) {
	c.mu.Lock()
	c.sigs = append(c.sigs, sig)
	c.views = append(c.views, view)
	c.mu.Unlock()
	return loop.CommandResult{
		Reply:  []brain.SendMessage{{Chat: sig.Chat, Text: "ok " + sig.Text, Kind: brain.KindSystem, Plain: true}},
		Forget: c.forget, Intents: c.intents,
	}, nil
}

// fakeStore is an in-memory loop.StateStore.
type fakeStore struct {
	mu      sync.Mutex
	rels    map[int64]brain.Relationship
	acks    []brain.Ack
	ackSave int
	deleted []int64
}

func (s *fakeStore) SaveRelationships(rels []brain.Relationship) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rels {
		s.rels[r.Chat] = r
	}
	return nil
}

func (s *fakeStore) SaveAcks(acks []brain.Ack) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acks = slices.Clone(acks)
	s.ackSave++
	return nil
}

func (s *fakeStore) DeleteRelationship(chat int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleted = append(s.deleted, chat)
	delete(s.rels, chat)
	return nil
}

// recAgg is the real aggregator, with the acks the loop gives it recorded.
type recAgg struct {
	*aggregation.Aggregator
	acked   chan brain.Ack
	decided chan brain.Wake // when set, every wake Decide returns, before the loop sees it
}

func (a *recAgg) Decide(now time.Time, st *brain.State, sigs []brain.Signal, out []brain.Wake) []brain.Wake {
	start := len(out)
	out = a.Aggregator.Decide(now, st, sigs, out)
	if a.decided != nil {
		for _, w := range out[start:] {
			a.decided <- w
		}
	}
	return out
}

func (a *recAgg) Ack(x brain.Ack) {
	a.Aggregator.Ack(x)
	a.acked <- x
}

// failFirst is a fakeSender.fail that fails the first send with err and lets the rest
// through.
func failFirst(err error) func(brain.SendMessage) error {
	var calls atomic.Int32
	return func(brain.SendMessage) error {
		if calls.Add(1) == 1 {
			return err
		}
		return nil
	}
}

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
