package brain_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
)

// guard bounds every wait of these tests; nothing here waits on real time otherwise.
const guard = 10 * time.Second

// recv returns the next value from ch, failing the test after guard.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// manualClock is a brain.Clock the test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeThinker records wakes and answers each user message with "re: <texts>". It can hold
// runs until the test releases them, and a script can replace the answer.
type fakeThinker struct {
	// Set before the loop starts.
	hold     chan struct{}           // when set, each Think takes one token (or ends with ctx)
	holdChat map[int64]chan struct{} // per-chat holds, preferred over hold
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
	return &fakeThinker{holdChat: map[int64]chan struct{}{}, entered: make(chan brain.Wake, 1024), perChat: map[int64]int{}}
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
	hold := f.holdChat[w.Chat]
	if hold == nil {
		hold = f.hold
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.perChat[w.Chat]--
		f.mu.Unlock()
	}()
	f.entered <- w
	if hold != nil {
		select {
		case <-hold:
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

func (f *fakeThinker) Wakes() []brain.Wake {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.wakes)
}

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

// fakeJournal is an in-memory brain.Journal.
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
		out = append(out, brain.Outgoing{ID: j.nextID, Msg: m})
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

func (j *fakeJournal) Recs() []brain.TurnRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.recs)
}

func (j *fakeJournal) Marked() []uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.marked)
}

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

func (s *fakeSender) Sent() []brain.SendMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

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
	forget bool

	mu    sync.Mutex
	sigs  []brain.Signal
	views []brain.CommandView
}

func (c *fakeCommands) Command(_ context.Context, sig brain.Signal, view brain.CommandView) (brain.CommandResult, error) {
	c.mu.Lock()
	c.sigs = append(c.sigs, sig)
	c.views = append(c.views, view)
	c.mu.Unlock()
	return brain.CommandResult{
		Reply:  []brain.SendMessage{{Chat: sig.Chat, Text: "ok " + sig.Text, Kind: brain.KindSystem, Plain: true}},
		Forget: c.forget,
	}, nil
}

// fakeStore is an in-memory brain.StateStore.
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
	acked chan brain.Ack
}

func (a *recAgg) Ack(x brain.Ack) {
	a.Aggregator.Ack(x)
	a.acked <- x
}

// noProactive is the aggregation config of tests that want only user-driven wakes.
func noProactive() brain.ProactivePolicy {
	c := brain.DefaultProactivePolicy()
	c.Enabled = false
	return c
}

// proactiveAnyTime is proactive contact without quiet hours or a tight daily cap.
func proactiveAnyTime() brain.ProactivePolicy {
	c := brain.DefaultProactivePolicy()
	c.QuietHours = brain.QuietHours{}
	c.MaxPerDay = 10
	return c
}

// harness runs a CoreLoop over fakes and the real aggregation layer.
type harness struct {
	t       *testing.T
	cfg     brain.LoopConfig
	clock   *manualClock
	st      *brain.State
	agg     *recAgg
	think   *fakeThinker
	journal *fakeJournal
	sender  *fakeSender
	cmds    *fakeCommands
	store   *fakeStore
	loop    *brain.CoreLoop

	cancel context.CancelFunc
	errc   chan error
	done   bool
}

func newHarness(t *testing.T, agg brain.ProactivePolicy) *harness {
	return &harness{
		t:       t,
		cfg:     brain.LoopConfig{Tick: time.Hour, Apology: "sorry, try again"}, // ticks stay out of the way
		clock:   &manualClock{now: t0},
		st:      brain.NewState(time.UTC),
		agg:     &recAgg{Aggregator: aggregation.New(agg, aggregation.Options{}), acked: make(chan brain.Ack, 64)},
		think:   newFakeThinker(),
		journal: newFakeJournal(),
		sender:  newFakeSender(),
		cmds:    &fakeCommands{},
		store:   &fakeStore{rels: map[int64]brain.Relationship{}},
	}
}

// build makes the loop (once); change the harness's fakes and config before.
func (h *harness) build() *brain.CoreLoop {
	if h.loop == nil {
		h.loop = brain.NewCoreLoop(h.cfg, brain.LoopDeps{
			Clock: h.clock, State: h.st, Aggregator: h.agg, Thinker: h.think, Journal: h.journal,
			Sender: h.sender, Commands: h.cmds, StateStore: h.store,
		})
	}
	return h.loop
}

// start runs the loop until stop (or the test's end).
func (h *harness) start() {
	l := h.build()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.errc = make(chan error, 1)
	go func() { h.errc <- l.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

// stop cancels Run and waits for it; after stop the state may be read.
func (h *harness) stop() {
	if h.done {
		return
	}
	h.done = true
	h.cancel()
	if err := recv(h.t, h.errc, "Run to return"); err != nil {
		h.t.Errorf("Run = %v, want nil", err)
	}
}

func (h *harness) submit(sigs ...brain.Signal) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := h.loop.Submit(ctx, sigs...); err != nil {
		h.t.Fatalf("Submit: %v", err)
	}
}

func (h *harness) msg(id uint64, chat int64, text string) brain.Signal {
	return brain.Signal{ID: id, Type: brain.SignalUserMessage, Source: "test", Chat: chat, User: chat,
		Text: text, At: h.clock.Now()}
}

// nudge is a signal no layer cares about: submitting it makes the loop run its layers.
func nudge() brain.Signal { return brain.Signal{Type: "nudge", Source: "test"} }

// quietRel is a relationship whose last exchange was ago.
func quietRel(chat int64, ago time.Duration) brain.Relationship {
	return brain.Relationship{Chat: chat, User: chat, LastUserMsg: t0.Add(-ago), LastAgentMsg: t0.Add(-ago),
		Status: brain.StatusIdle}
}

func TestLoopAnswersUserMessage(t *testing.T) {
	h := newHarness(t, noProactive())
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		h.clock.Advance(30 * time.Second) // thinking takes time
		return answer(w), nil
	}
	h.start()
	h.submit(h.msg(1, 100, "hi"))
	got := recv(t, h.sender.attempts, "the reply")
	h.stop()

	if want := (brain.SendMessage{Chat: 100, Text: "re: hi", Kind: brain.KindReply}); got.Chat != want.Chat ||
		got.Text != want.Text || got.Kind != want.Kind {
		t.Errorf("sent %+v, want %+v", got, want)
	}
	wakes := h.think.Wakes()
	if len(wakes) != 1 {
		t.Fatalf("Think called %d times, want 1", len(wakes))
	}
	w := wakes[0]
	if w.Reason.Code != brain.ReasonUserMessage || w.Profile != brain.ProfileChat || w.Chat != 100 || w.User != 100 {
		t.Errorf("wake = chat %d user %d reason %q profile %q", w.Chat, w.User, w.Reason.Code, w.Profile)
	}
	if ids := signalIDs(w); !slices.Equal(ids, []uint64{1}) {
		t.Errorf("wake signals %v, want [1]", ids)
	}
	if !w.Rel.LastUserMsg.Equal(t0) {
		t.Errorf("wake's relationship snapshot LastUserMsg = %v, want %v", w.Rel.LastUserMsg, t0)
	}

	recs := h.journal.Recs()
	if len(recs) != 1 {
		t.Fatalf("%d turn records, want 1", len(recs))
	}
	rec := recs[0]
	if !slices.Equal(rec.Done, []uint64{1}) || rec.Chat != 100 || rec.User != 100 {
		t.Errorf("record done %v chat %d user %d", rec.Done, rec.Chat, rec.User)
	}
	wantTurns := []brain.Turn{
		{Role: "user", Text: "hi", At: t0},
		{Role: "assistant", Text: "re: hi", At: t0.Add(30 * time.Second), Kind: brain.KindReply},
	}
	if len(rec.Turns) != len(wantTurns) {
		t.Fatalf("turns %+v, want %+v", rec.Turns, wantTurns)
	}
	for i := range wantTurns {
		g, w := rec.Turns[i], wantTurns[i]
		if g.Role != w.Role || g.Text != w.Text || !g.At.Equal(w.At) || g.Kind != w.Kind {
			t.Errorf("turn %d = %+v, want %+v", i, g, w)
		}
	}
	if len(rec.Outbox) != 1 || rec.Rel != nil {
		t.Errorf("outbox %+v rel %v, want one message and no relationship", rec.Outbox, rec.Rel)
	}
	if m := h.journal.Marked(); !slices.Equal(m, []uint64{101}) {
		t.Errorf("marked sent %v, want [101]", m)
	}

	rel := h.st.Rel(100)
	if rel == nil {
		t.Fatal("no relationship for chat 100")
	}
	if !rel.LastUserMsg.Equal(t0) || !rel.LastAgentMsg.Equal(t0.Add(30*time.Second)) || rel.Status != brain.StatusActive {
		t.Errorf("relationship: user %v agent %v status %q", rel.LastUserMsg, rel.LastAgentMsg, rel.Status)
	}
	saved, ok := h.store.rels[100]
	if !ok || !saved.LastAgentMsg.Equal(rel.LastAgentMsg) {
		t.Errorf("stopping did not persist the relationship: %+v (saved %v)", saved, ok)
	}
}

func TestLoopFoldsBurstAndKeepsChatsIndependent(t *testing.T) {
	const a, b = 1, 2
	h := newHarness(t, noProactive())
	releaseA := make(chan struct{})
	h.think.holdChat[a] = releaseA
	h.start()

	h.submit(h.msg(1, a, "one"))
	if w := recv(t, h.think.entered, "A's first run"); !slices.Equal(signalIDs(w), []uint64{1}) {
		t.Fatalf("first wake has %v", signalIDs(w))
	}
	h.submit(h.msg(2, a, "two"))
	h.submit(h.msg(3, a, "three"))
	h.submit(h.msg(4, a, "four"))
	h.submit(h.msg(5, b, "bee"))

	// B is answered while A's run is still held.
	if w := recv(t, h.think.entered, "B's run"); w.Chat != b {
		t.Fatalf("next run is for chat %d, want %d", w.Chat, b)
	}
	if m := recv(t, h.sender.attempts, "B's reply"); m.Chat != b || m.Text != "re: bee" {
		t.Fatalf("first message sent = %+v, want B's reply", m)
	}

	close(releaseA)
	w := recv(t, h.think.entered, "A's second run")
	if w.Chat != a || !slices.Equal(signalIDs(w), []uint64{2, 3, 4}) {
		t.Fatalf("second run: chat %d signals %v, want chat %d with [2 3 4]", w.Chat, signalIDs(w), a)
	}
	recv(t, h.sender.attempts, "A's first reply")
	recv(t, h.sender.attempts, "A's second reply")
	h.stop()

	if got, want := h.sender.SentTo(a), []string{"re: one", "re: two|three|four"}; !slices.Equal(got, want) {
		t.Errorf("A got %q, want %q", got, want)
	}
	if n := len(h.think.Wakes()); n != 3 {
		t.Errorf("Think called %d times, want 3", n)
	}
	var done []uint64
	for _, r := range h.journal.Recs() {
		if r.Chat == a {
			done = append(done, r.Done...)
		}
	}
	if !slices.Equal(done, []uint64{1, 2, 3, 4}) {
		t.Errorf("A's records consumed %v, want [1 2 3 4]", done)
	}
}

func TestLoopOrderPerChatAndBoundedConcurrency(t *testing.T) {
	const chatsN, perChat = 4, 5
	h := newHarness(t, noProactive())
	h.cfg.MaxConcurrent = 2
	h.think.hold = make(chan struct{})
	h.start()

	var id uint64
	for i := range perChat {
		for c := int64(1); c <= chatsN; c++ {
			id++
			h.submit(h.msg(id, c, fmt.Sprintf("c%d-m%d", c, i)))
		}
	}
	// Two runs start and are held; only releasing one lets another start.
	recv(t, h.think.entered, "first run")
	recv(t, h.think.entered, "second run")

	stopFeed := make(chan struct{})
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for {
			select {
			case h.think.hold <- struct{}{}:
			case <-stopFeed:
				return
			}
		}
	}()
	consumed := 0
	for consumed < chatsN*perChat {
		consumed += len(recv(t, h.journal.commits, "a turn record").Done)
	}
	close(stopFeed)
	<-fed
	h.stop()

	h.think.mu.Lock()
	maxIn, overlap := h.think.maxIn, h.think.overlap
	h.think.mu.Unlock()
	if maxIn != 2 {
		t.Errorf("at most %d runs at once, want exactly 2 (MaxConcurrent)", maxIn)
	}
	if overlap {
		t.Error("two runs of one chat overlapped")
	}
	seen := map[int64][]string{}
	for _, w := range h.think.Wakes() {
		for _, s := range w.Signals {
			seen[w.Chat] = append(seen[w.Chat], s.Text)
		}
	}
	for c := int64(1); c <= chatsN; c++ {
		var want []string
		for i := range perChat {
			want = append(want, fmt.Sprintf("c%d-m%d", c, i))
		}
		if !slices.Equal(seen[c], want) {
			t.Errorf("chat %d thought about %q, want %q in order", c, seen[c], want)
		}
		var replies []string
		for _, r := range h.sender.SentTo(c) {
			replies = append(replies, strings.Split(strings.TrimPrefix(r, "re: "), "|")...)
		}
		if !slices.Equal(replies, want) {
			t.Errorf("chat %d replies cover %q, want %q in order", c, replies, want)
		}
	}
}

func TestLoopThinkFailures(t *testing.T) {
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
		h.start()
		in := h.msg(1, 7, "are you there?")
		in.MessageID = 55
		h.submit(in)
		m := recv(t, h.sender.attempts, "the apology")
		h.stop()
		if m.Text != "sorry, try again" || m.Kind != brain.KindSystem || !m.Plain || m.ReplyTo != 55 {
			t.Errorf("sent %+v, want the configured apology (system, plain, reply to 55)", m)
		}
		if n := len(h.sender.Sent()); n != 1 {
			t.Errorf("%d messages sent, want 1", n)
		}
		recs := h.journal.Recs()
		if len(recs) != 1 || !slices.Equal(recs[0].Done, []uint64{1}) || len(recs[0].Turns) != 1 || recs[0].Turns[0].Role != "user" {
			t.Errorf("records %+v, want one consuming signal 1 with only the user's turn", recs)
		}
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

func TestLoopCommands(t *testing.T) {
	cmd := func(id uint64, chat int64, text string) brain.Signal {
		return brain.Signal{ID: id, Type: brain.SignalCommand, Source: "test", Chat: chat, User: chat, Text: text, At: t0}
	}
	t.Run("answered without the model", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.start()
		h.submit(cmd(1, 9, "/status"))
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
		h.submit(cmd(1, 9, "/forget yes"))
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

func TestLoopSendFailures(t *testing.T) {
	t.Run("blocked makes the relationship dormant", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.sender.fail = func(brain.SendMessage) error { return fmt.Errorf("telegram 403: %w", brain.ErrBlocked) }
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the send attempt")
		h.stop()
		rel := h.st.Rel(5)
		if !rel.Dormant {
			t.Error("relationship not dormant after ErrBlocked")
		}
		if !rel.LastAgentMsg.IsZero() {
			t.Errorf("LastAgentMsg = %v for an undelivered message", rel.LastAgentMsg)
		}
		if !slices.Equal(h.journal.Marked(), []uint64{101}) {
			t.Errorf("marked %v: a message to a blocked user is dropped from the outbox", h.journal.Marked())
		}
		if !h.store.rels[5].Dormant {
			t.Error("dormancy not persisted on stop")
		}
	})

	t.Run("other errors keep the entry", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.sender.fail = func(brain.SendMessage) error { return errors.New("network down") }
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the send attempt")
		h.stop()
		if m := h.journal.Marked(); len(m) != 0 {
			t.Errorf("marked %v, want nothing (the entry stays in the outbox)", m)
		}
		if rel := h.st.Rel(5); rel.Dormant || !rel.LastAgentMsg.IsZero() {
			t.Errorf("relationship %+v changed by a failed send", *rel)
		}
	})
}

func TestLoopRetriesFailedSendAfterBackoff(t *testing.T) {
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond // real ticks; the backoff runs on the manual clock
	h.sender.fail = failFirst(errors.New("network down"))
	h.start()
	h.submit(h.msg(1, 5, "hi"))
	recv(t, h.sender.attempts, "the first send attempt")
	select {
	case <-h.sender.attempts:
		t.Fatal("retried before the backoff")
	case <-time.After(50 * time.Millisecond):
	}
	m := advanceUntil(t, h, 31*time.Second, "the retry after the backoff")
	if m.Text == "" {
		t.Fatal("retry sent an empty message")
	}
	h.stop()
	if got := h.sender.SentTo(5); len(got) != 1 {
		t.Errorf("delivered %q, want exactly one message", got)
	}
	if !slices.Equal(h.journal.Marked(), []uint64{101}) {
		t.Errorf("marked %v, want the retried entry", h.journal.Marked())
	}
}

func TestLoopDeferIntent(t *testing.T) {
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

func TestLoopSuppressesRepeatedProactiveMessages(t *testing.T) {
	turn := func(role, text string) brain.Turn {
		return brain.Turn{Role: role, Text: text, At: t0.Add(-8 * time.Hour)}
	}
	filler := func(n int) []brain.Turn {
		var ts []brain.Turn
		for i := range n {
			ts = append(ts, turn("user", fmt.Sprintf("user line %d", i)),
				turn("assistant", fmt.Sprintf("unrelated answer number %d here", i)))
		}
		return ts
	}
	const said = "how did the interview go yesterday"
	tests := []struct {
		name    string
		history []brain.Turn
		text    string
		kind    brain.MessageKind
		sent    bool
	}{
		{"first proactive message", nil, said, brain.KindProactive, true},
		{"exact repeat", []brain.Turn{turn("assistant", said)}, said, brain.KindProactive, false},
		{"repeat in other words order is new", []brain.Turn{turn("assistant", said)}, "yesterday the interview, how did it go", brain.KindProactive, true},
		{"jaccard exactly 0.5", []brain.Turn{turn("assistant", "a b c d e")}, "a b c d x", brain.KindProactive, false},
		{"jaccard one third", []brain.Turn{turn("assistant", "a b c d")}, "a b c e", brain.KindProactive, true},
		{"follow-ups are checked too", []brain.Turn{turn("assistant", said)}, said + "?", brain.KindFollowup, false},
		{"only the user said it", []brain.Turn{turn("user", said)}, said, brain.KindProactive, true},
		{"oldest of the last 20 assistant turns", append([]brain.Turn{turn("assistant", said)}, filler(19)...), said, brain.KindProactive, false},
		{"21st assistant turn back is forgotten", append([]brain.Turn{turn("assistant", said)}, filler(20)...), said, brain.KindProactive, true},
	}
	h := newHarness(t, proactiveAnyTime())
	byChat := map[int64]int{}
	for i, tc := range tests {
		chat := int64(i + 1)
		byChat[chat] = i
		h.st.Upsert(quietRel(chat, 7*time.Hour))
		h.journal.turns[chat] = tc.history
	}
	h.cfg.MaxConcurrent = len(tests)
	h.think.script = func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
		tc := tests[byChat[w.Chat]]
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Text: tc.text, Kind: tc.kind}}}, nil
	}
	h.start()
	h.submit(nudge())
	for range tests {
		// Every proactive run commits (at least the relationship), sent or not.
		if rec := recv(t, h.journal.commits, "a proactive run's record"); rec.Rel == nil {
			t.Errorf("record of chat %d without the relationship", rec.Chat)
		}
	}
	h.stop()
	for chat, i := range byChat {
		tc := tests[i]
		t.Run(tc.name, func(t *testing.T) {
			got := h.sender.SentTo(chat)
			if tc.sent && !slices.Equal(got, []string{tc.text}) {
				t.Errorf("sent %q, want %q", got, tc.text)
			}
			if !tc.sent && len(got) != 0 {
				t.Errorf("sent %q, want it suppressed as a repeat", got)
			}
			// Sent or suppressed, the proactive run backs off once (a run that ends
			// with nothing said counts like an unanswered message).
			rel := h.st.Rel(chat)
			if want := 1; rel.UnansweredProactive != want {
				t.Errorf("UnansweredProactive = %d, want %d", rel.UnansweredProactive, want)
			}
		})
	}
	for _, w := range h.think.Wakes() {
		if w.Reason.Code != brain.ReasonProactive || w.Profile != brain.ProfileProactive {
			t.Errorf("wake of chat %d: reason %q profile %q", w.Chat, w.Reason.Code, w.Profile)
		}
	}
}

func TestLoopDeliversLeftoversFirst(t *testing.T) {
	h := newHarness(t, noProactive())
	h.cfg.MaxConcurrent = 1
	h.st.Upsert(quietRel(1, time.Hour))
	l := h.build()
	l.Deliver([]brain.Outgoing{
		{ID: 11, Msg: brain.SendMessage{Chat: 1, Text: "left 1", Kind: brain.KindReply}},
		{ID: 12, Msg: brain.SendMessage{Chat: 2, Text: "left 2", Kind: brain.KindReply}},
		{ID: 13, Msg: brain.SendMessage{Chat: 1, Text: "left 3", Kind: brain.KindProactive}},
	})
	h.start()
	h.submit(h.msg(1, 1, "new"))
	for range 4 {
		recv(t, h.sender.attempts, "a delivery")
	}
	h.stop()
	if got, want := h.sender.SentTo(1), []string{"left 1", "left 3", "re: new"}; !slices.Equal(got, want) {
		t.Errorf("chat 1 got %q, want %q", got, want)
	}
	if got := h.sender.SentTo(2); !slices.Equal(got, []string{"left 2"}) {
		t.Errorf("chat 2 got %q", got)
	}
	m := h.journal.Marked()
	for _, id := range []uint64{11, 12, 13} {
		if !slices.Contains(m, id) {
			t.Errorf("left-over entry %d not marked sent (marked %v)", id, m)
		}
	}
	if rel := h.st.Rel(1); !rel.LastAgentMsg.Equal(t0) {
		t.Errorf("LastAgentMsg = %v, want %v (left-overs count as sent)", rel.LastAgentMsg, t0)
	}
}

func TestLoopStopPersistsAndIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.StopGrace = 3 * time.Second
		h.think.hold = make(chan struct{}) // never released: the run ends only with its context
		h.start()
		h.submit(h.msg(1, 4, "hi"))
		recv(t, h.think.entered, "the run")

		start := time.Now()
		h.stop()
		if took := time.Since(start); took != h.cfg.StopGrace {
			t.Errorf("stop took %v, want the grace %v", took, h.cfg.StopGrace)
		}
		h.think.mu.Lock()
		canceled := h.think.canceled
		h.think.mu.Unlock()
		if canceled != 1 {
			t.Errorf("%d runs saw their context end, want 1", canceled)
		}
		if recs := h.journal.Recs(); len(recs) != 0 {
			t.Errorf("an interrupted run committed %+v; its signals must stay in the inbox", recs)
		}
		if rel, ok := h.store.rels[4]; !ok || !rel.LastUserMsg.Equal(t0) {
			t.Errorf("relationship not flushed on stop: %+v %v", rel, ok)
		}
		if h.store.ackSave == 0 {
			t.Error("acks not flushed on stop")
		}
	})
}

// TestLoopStopStartsNoNewRuns: once Run is stopping, a run that finishes must not start the
// chat's next queued job (it would outlive Run or race the WaitGroup).
func TestLoopStopStartsNoNewRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.StopGrace = time.Minute
		hold := make(chan struct{})
		h.think.holdChat[4] = hold
		h.start()
		h.submit(h.msg(1, 4, "one"))
		recv(t, h.think.entered, "the first run")
		h.submit(h.msg(2, 4, "two")) // queued behind the first run
		synctest.Wait()

		h.cancel()
		synctest.Wait() // Run is now stopping, waiting for the run in flight
		hold <- struct{}{}
		synctest.Wait()
		h.stop()

		if n := len(h.think.Wakes()); n != 1 {
			t.Errorf("Think called %d times, want 1: a queued run started while stopping", n)
		}
		if got := h.sender.SentTo(4); !slices.Equal(got, []string{"re: one"}) {
			t.Errorf("sent %q, want only the first reply", got)
		}
		var done []uint64
		for _, r := range h.journal.Recs() {
			done = append(done, r.Done...)
		}
		if !slices.Equal(done, []uint64{1}) {
			t.Errorf("consumed %v, want [1] (signal 2 stays in the inbox for the next start)", done)
		}
	})
}

// TestLoopFoldingKeepsOrderAroundCommands: a burst is folded only while nothing else is
// queued after it; a message sent after a command is answered after the command.
func TestLoopFoldingKeepsOrderAroundCommands(t *testing.T) {
	const a, b = 1, 2
	h := newHarness(t, noProactive())
	hold := make(chan struct{})
	h.think.holdChat[a] = hold
	h.start()

	h.submit(h.msg(1, a, "one"))
	recv(t, h.think.entered, "A's first run")
	h.submit(h.msg(2, a, "two"))
	h.submit(brain.Signal{ID: 3, Type: brain.SignalCommand, Source: "test", Chat: a, User: a, Text: "/quiet", At: t0})
	h.submit(h.msg(4, a, "three"))
	h.submit(h.msg(5, a, "four"))
	h.submit(h.msg(6, b, "bee")) // processed after all of A's: a barrier
	recv(t, h.sender.attempts, "B's reply")

	close(hold)
	for range 4 {
		recv(t, h.sender.attempts, "A's messages")
	}
	h.stop()
	want := []string{"re: one", "re: two", "ok /quiet", "re: three|four"}
	if got := h.sender.SentTo(a); !slices.Equal(got, want) {
		t.Errorf("A got %q, want %q", got, want)
	}
}

// thoughtNeuron emits one thought for a chat, once.
type thoughtNeuron struct{ fired bool }

func (n *thoughtNeuron) Name() string { return "test_thought" }

func (n *thoughtNeuron) Check(now time.Time, _ *brain.State) (brain.Signal, bool) {
	if n.fired {
		return brain.Signal{}, false
	}
	n.fired = true
	return brain.Signal{Type: brain.SignalThought, Source: "test_thought", Chat: 9, Text: "ask how the exam went", At: now}, true
}

func TestNeuronThoughtWakesCognition(t *testing.T) {
	st := brain.NewState(time.UTC)
	st.Upsert(quietRel(9, time.Hour))
	agg := aggregation.New(noProactive(), aggregation.Options{})
	auto := autonomic.New(autonomic.Default(), &thoughtNeuron{})
	l := brain.NewCoreLoop(brain.LoopConfig{}, brain.LoopDeps{State: st, Autonomic: auto, Aggregator: agg})
	wakes := l.Step(t0, nil)
	if len(wakes) != 1 || wakes[0].Chat != 9 || wakes[0].Reason.Code != brain.ReasonThought {
		t.Fatalf("wakes = %+v, want one thought wake for chat 9", wakes)
	}
	if again := l.Step(t0.Add(time.Second), nil); len(again) != 0 {
		t.Errorf("the handled thought woke cognition again: %+v", again)
	}
}

func TestLoopDropsUndeliverableAndResumesPartialSends(t *testing.T) {
	t.Run("undeliverable is dropped, not retried", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		h.sender.fail = func(brain.SendMessage) error { return fmt.Errorf("400 chat not found: %w", brain.ErrUndeliverable) }
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		recv(t, h.sender.attempts, "the send attempt")
		h.clock.Advance(time.Hour)
		select {
		case <-h.sender.attempts:
			t.Fatal("an undeliverable message was retried")
		case <-time.After(100 * time.Millisecond):
		}
		h.stop()
		if !slices.Equal(h.journal.Marked(), []uint64{101}) {
			t.Errorf("marked %v, want the undeliverable entry dropped from the outbox", h.journal.Marked())
		}
	})
	t.Run("a partial send resumes after the delivered parts", func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		h.sender.fail = failFirst(&brain.PartialSendError{Sent: 2, Err: errors.New("network down")})
		h.start()
		h.submit(h.msg(1, 5, "hi"))
		if m := recv(t, h.sender.attempts, "the first attempt"); m.SkipParts != 0 {
			t.Fatalf("first attempt skips %d parts", m.SkipParts)
		}
		if m := advanceUntil(t, h, time.Minute, "the retry"); m.SkipParts != 2 {
			t.Errorf("retry skips %d parts, want the 2 delivered", m.SkipParts)
		}
		h.stop()
		h.journal.mu.Lock()
		defer h.journal.mu.Unlock()
		if m, ok := h.journal.updated[101]; !ok || m.SkipParts != 2 {
			t.Errorf("outbox entry not updated with the delivered parts: %+v", h.journal.updated)
		}
	})
}

// advanceUntil moves the manual clock by step every few milliseconds until the sender
// sees another attempt (the loop schedules a retry only after it has taken in the failed
// one, so a single early advance could come before the retry exists).
func advanceUntil(t *testing.T, h *harness, step time.Duration, what string) brain.SendMessage {
	t.Helper()
	deadline := time.After(guard)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case m := <-h.sender.attempts:
			return m
		case <-tick.C:
			h.clock.Advance(step)
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestLoopNewRepliesQueueBehindAFailedOne(t *testing.T) {
	h := newHarness(t, noProactive())
	h.cfg.Tick = 5 * time.Millisecond
	h.sender.fail = failFirst(errors.New("network down"))
	h.start()
	h.submit(h.msg(1, 5, "first"))
	recv(t, h.sender.attempts, "the failed first send")
	h.submit(h.msg(2, 5, "second"))
	select {
	case m := <-h.sender.attempts:
		t.Fatalf("%q was sent while an earlier reply waited for its retry", m.Text)
	case <-time.After(100 * time.Millisecond):
	}
	advanceUntil(t, h, 31*time.Second, "the retry")
	recv(t, h.sender.attempts, "the held reply")
	h.stop()
	got := h.sender.SentTo(5)
	if len(got) != 2 || !strings.Contains(got[0], "first") || !strings.Contains(got[1], "second") {
		t.Errorf("delivered %q, want the replies to first and second, in that order", got)
	}
}

// TestLoopRetryKeepsRepliesHeldDuringIt: a reply committed (held) while the retry of an
// earlier one is already queued must neither be forgotten when that retry succeeds nor
// overtake it when the retry fails again.
func TestLoopRetryKeepsRepliesHeldDuringIt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int32 // failed attempts of the first reply
	}{
		{"retry succeeds", 1},
		{"retry fails again", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, noProactive())
				h.cfg.Tick = 5 * time.Millisecond
				var fails atomic.Int32
				h.sender.fail = func(m brain.SendMessage) error {
					if strings.Contains(m.Text, "first") && fails.Add(1) <= tc.failures {
						return errors.New("network down")
					}
					return nil
				}
				h.think.hold = make(chan struct{}, 1)
				h.think.hold <- struct{}{} // the first run goes through
				h.start()
				h.submit(h.msg(1, 5, "first"))
				recv(t, h.sender.attempts, "the failed first send")
				h.submit(h.msg(2, 5, "second")) // its run waits on hold
				recv(t, h.think.entered, "the first run")
				recv(t, h.think.entered, "the second run")
				h.clock.Advance(31 * time.Second)
				time.Sleep(20 * time.Millisecond) // ticks: the retry is queued behind the run
				synctest.Wait()
				h.think.hold <- struct{}{} // the second reply is committed and held
				synctest.Wait()
				for range 20 {
					h.clock.Advance(time.Minute)
					time.Sleep(20 * time.Millisecond)
					synctest.Wait()
				}
				h.stop()
				got := h.sender.SentTo(5)
				if len(got) != 2 || !strings.Contains(got[0], "first") || !strings.Contains(got[1], "second") {
					t.Errorf("delivered %q, want the replies to first and second, in that order", got)
				}
			})
		})
	}
}

// TestLoopForgetDropsPendingRetries: /forget deletes the chat's undelivered outbox entries;
// the loop must not send the ones it still holds for a retry afterwards.
func TestLoopForgetDropsPendingRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, noProactive())
		h.cfg.Tick = 5 * time.Millisecond
		h.cmds.forget = true
		var fails atomic.Int32
		h.sender.fail = func(m brain.SendMessage) error {
			if fails.Add(1) == 1 {
				return errors.New("network down")
			}
			return nil
		}
		h.start()
		h.submit(h.msg(1, 5, "my secret"))
		recv(t, h.sender.attempts, "the failed reply")
		h.submit(brain.Signal{ID: 2, Type: brain.SignalCommand, Source: "test", Chat: 5, User: 5, Text: "/forget yes", At: t0})
		synctest.Wait()
		for range 30 {
			h.clock.Advance(time.Minute)
			time.Sleep(20 * time.Millisecond)
			synctest.Wait()
		}
		h.stop()
		if got := h.sender.SentTo(5); !slices.Equal(got, []string{"ok /forget yes"}) {
			t.Errorf("delivered %q after /forget, want only its confirmation", got)
		}
	})
}

// TestLoopStopWithManyRunsInFlight: with more runs in flight than the result buffer
// holds, the runs cancelled at the end of the stop grace must still report back.
func TestLoopStopWithManyRunsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const chats = 100
		h := newHarness(t, noProactive())
		h.cfg.MaxConcurrent = chats
		h.cfg.StopGrace = 3 * time.Second
		h.think.hold = make(chan struct{}) // never released
		h.start()
		for c := range chats {
			h.submit(h.msg(uint64(c+1), int64(c+1), "hi"))
		}
		for range chats {
			recv(t, h.think.entered, "a run")
		}
		start := time.Now()
		h.stop()
		if took := time.Since(start); took != h.cfg.StopGrace {
			t.Errorf("stop took %v, want the grace %v", took, h.cfg.StopGrace)
		}
	})
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
