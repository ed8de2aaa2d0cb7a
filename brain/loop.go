package brain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TurnRecord is everything a finished turn writes at once: the inbox entries it consumed,
// the history it adds, the messages to send and the intents with lasting effects.
type TurnRecord struct {
	Done    []uint64
	Chat    int64
	User    int64
	Turns   []Turn
	Outbox  []SendMessage
	Intents []Intent
	// Rel, when set, is stored as the chat's relationship in the same transaction.
	Rel *Relationship
	At  time.Time
}

// Outgoing is an outbox entry: a message durably queued for sending.
type Outgoing struct {
	ID  uint64
	Msg SendMessage
}

// Journal is the durable side of the loop (implemented over storage by package bot).
type Journal interface {
	// Commit writes rec atomically and returns the outbox entries it created.
	Commit(ctx context.Context, rec TurnRecord) ([]Outgoing, error)
	// MarkSent removes a delivered outbox entry.
	MarkSent(id uint64) error
	// Recent returns up to n of chat's latest turns, oldest first.
	Recent(chat int64, n int) ([]Turn, error)
}

// OutboxUpdater is an optional extension of a Journal: UpdateOutbox rewrites an undelivered
// outbox entry (a long message whose first parts were delivered), so a restart resumes it
// where it stopped.
type OutboxUpdater interface {
	UpdateOutbox(id uint64, m SendMessage) error
}

// Maintainer is an optional extension of a Journal: Maintain runs after a chat's turn,
// off the tick, for upkeep such as folding old turns into a summary.
type Maintainer interface {
	Maintain(ctx context.Context, chat int64) error
}

// Sender delivers a message. It returns an error wrapping ErrBlocked when the user blocked
// the bot; other errors leave the message in the outbox for a later try.
type Sender interface {
	Send(ctx context.Context, m SendMessage) error
}

// Typer shows a "typing…" indicator; a Sender may implement it.
type Typer interface {
	Typing(ctx context.Context, chat int64) error
}

// CommandView is what a command handler may read about the chat.
type CommandView struct {
	Rel  Relationship
	Acks []Ack
	Now  time.Time
	Loc  *time.Location
}

// CommandResult is a command's answer and effects.
type CommandResult struct {
	Reply   []SendMessage
	Intents []Intent
	// Forget is set when the handler deleted everything stored about the chat.
	Forget bool
}

// CommandHandler answers /commands without the model.
type CommandHandler interface {
	Command(ctx context.Context, sig Signal, view CommandView) (CommandResult, error)
}

// StateStore persists relationships and acks between runs.
type StateStore interface {
	SaveRelationships(rels []Relationship) error
	SaveAcks(acks []Ack) error
	// DeleteRelationship removes a forgotten chat's relationship.
	DeleteRelationship(chat int64) error
}

// LoopConfig tunes the CoreLoop.
type LoopConfig struct {
	Tick          time.Duration // default 1s
	MaxConcurrent int           // cognition runs at once (default 8)
	Apology       string        // sent when cognition fails on a user message
	// StopGrace bounds how long Run waits for runs in flight when stopping (default 5s).
	StopGrace time.Duration
	// DuplicateWindow is how many recent sent messages a proactive one is compared with.
	DuplicateWindow int
	// LogText logs message texts at debug level (off by default: texts are private).
	LogText bool
	// TypingDelay is how long a run may take before the typing indicator shows
	// (default 250ms; a negative value shows it at once).
	TypingDelay time.Duration
}

// LoopDeps are the CoreLoop's collaborators. Nil optional ones become no-ops.
type LoopDeps struct {
	Clock      Clock
	State      *State
	Autonomic  Autonomic // optional
	Aggregator Aggregator
	Thinker    Thinker
	Journal    Journal
	Sender     Sender
	Commands   CommandHandler // optional
	StateStore StateStore     // optional
	// Apply applies in-memory effects of intents the loop does not know (plugin intents).
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

type jobKind int

const (
	jobWake jobKind = iota
	jobCommand
	jobDeliver
)

type job struct {
	kind    jobKind
	wake    Wake
	command Signal
	deliver []Outgoing
}

type chatQueue struct {
	running bool
	jobs    []job
}

type result struct {
	chat     int64
	sent     []MessageKind
	sentAt   time.Time
	status   ConversationStatus
	blocked  bool
	forget   bool
	thinking bool
	silent   bool       // a proactive run that chose to say nothing
	retry    []Outgoing // entries whose delivery failed (or was held), to try again later
	hold     bool       // the chat has undelivered entries waiting: queue new ones behind them
	intents  []Intent
	err      error
}

// retryState is a chat's undelivered outbox entries waiting for another try.
type retryState struct {
	entries []Outgoing
	at      time.Time
	attempt int
}

// CoreLoop runs the brain: it collects signals, runs the autonomic and aggregation layers
// on every tick and on every arrival, wakes cognition per chat (in order, bounded
// concurrency, off the tick) and applies the intents that come back.
type CoreLoop struct {
	cfg  LoopConfig
	deps LoopDeps
	log  *slog.Logger
	m    *loopMetrics

	in   chan []Signal
	done chan result

	// owned by the Run goroutine
	st       *State
	chats    map[int64]*chatQueue
	running  int
	sigBuf   []Signal
	wakeBuf  []Wake
	dirty    map[int64]bool
	acksDirt bool
	wg       sync.WaitGroup
	workCtx  context.Context
	stopping bool // set by stop: no new job starts
	retries  map[int64]*retryState
	// forgotten are chats whose relationship the persister must delete.
	forgotten []int64
	persist   chan persistJob
}

// NewCoreLoop builds a loop; call Run to start it.
func NewCoreLoop(cfg LoopConfig, deps LoopDeps) *CoreLoop {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 8
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 5 * time.Second
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = 20
	}
	if cfg.TypingDelay == 0 {
		cfg.TypingDelay = 250 * time.Millisecond
	} else if cfg.TypingDelay < 0 {
		cfg.TypingDelay = 0
	}
	if cfg.Apology == "" {
		cfg.Apology = "Sorry — my thoughts got tangled just now. Could you say that again in a minute?"
	}
	if deps.Clock == nil {
		deps.Clock = RealClock{}
	}
	if deps.State == nil {
		deps.State = NewState(nil)
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &CoreLoop{
		cfg:  cfg,
		deps: deps,
		log:  log.With("component", "brain"),
		m:    newLoopMetrics(deps.Registerer),
		in:   make(chan []Signal, 1024),
		// Room for every run in flight: a run never blocks reporting back, even one that
		// ends while stop waits only for the WaitGroup, or after Run returned.
		done:  make(chan result, max(64, cfg.MaxConcurrent)),
		st:    deps.State,
		chats: map[int64]*chatQueue{},
		dirty: map[int64]bool{},
	}
}

// Submit hands recorded signals to the loop. It blocks only while the loop's queue is
// full.
func (l *CoreLoop) Submit(ctx context.Context, sigs ...Signal) error {
	if len(sigs) == 0 {
		return nil
	}
	select {
	case l.in <- sigs:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Deliver queues outbox entries left from an earlier run (in order, per chat) ahead of
// new work. Call before Run.
func (l *CoreLoop) Deliver(entries []Outgoing) {
	for _, e := range entries {
		q := l.queue(e.Msg.Chat)
		if n := len(q.jobs); n > 0 && q.jobs[n-1].kind == jobDeliver {
			q.jobs[n-1].deliver = append(q.jobs[n-1].deliver, e)
			continue
		}
		q.jobs = append(q.jobs, job{kind: jobDeliver, deliver: []Outgoing{e}})
	}
	l.m.outboxPending.Add(float64(len(entries)))
}

// Run runs the loop until ctx ends, then waits (bounded) for runs in flight and persists
// state. It returns nil on a clean stop.
func (l *CoreLoop) Run(ctx context.Context) error {
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	l.workCtx = workCtx
	ticker := time.NewTicker(l.cfg.Tick)
	defer ticker.Stop()
	flushEvery := 0
	l.persist = make(chan persistJob)
	persisted := make(chan struct{})
	go func() {
		defer close(persisted)
		l.persister(l.persist)
	}()
	defer func() {
		close(l.persist)
		<-persisted
	}()

	for chat := range l.chats {
		l.startNext(chat)
	}
	for {
		select {
		case <-ctx.Done():
			return l.stop(cancelWork)
		case sigs := <-l.in:
			l.step(l.deps.Clock.Now(), sigs, false)
		case r := <-l.done:
			l.finish(r)
		case <-ticker.C:
			l.step(l.deps.Clock.Now(), nil, true)
			flushEvery++
			if flushEvery >= 5 {
				flushEvery = 0
				l.flush(false)
			}
		}
	}
}

func (l *CoreLoop) stop(cancelWork context.CancelFunc) error {
	// Jobs still queued stay undone (their signals in the inbox, their entries in the
	// outbox) for the next start; starting one now would outlive Run and race l.wg.Wait.
	l.stopping = true
	waited := make(chan struct{})
	go func() { l.wg.Wait(); close(waited) }()
	timer := time.NewTimer(l.cfg.StopGrace)
	defer timer.Stop()
	for {
		select {
		case r := <-l.done:
			l.finish(r)
			continue
		case <-waited:
		case <-timer.C:
			cancelWork()
			select {
			case <-waited:
			case <-time.After(l.cfg.StopGrace):
				l.log.Error("runs still in flight after the stop grace and cancellation; stopping without them")
			}
		}
		break
	}
	// Drain results of runs that ended during the wait.
	for {
		select {
		case r := <-l.done:
			l.finish(r)
			continue
		default:
		}
		break
	}
	l.flush(true)
	return nil
}

// Step runs one tick of the layers at now, synchronously, without starting cognition
// runs; it returns the wakes it would dispatch. Simulations and tests drive the brain
// through it.
func (l *CoreLoop) Step(now time.Time, sigs []Signal) []Wake {
	l.observe(now, sigs)
	l.sigBuf = l.sigBuf[:0]
	if l.deps.Autonomic != nil {
		l.sigBuf = l.deps.Autonomic.Sense(now, l.st, l.sigBuf)
	}
	for _, s := range l.sigBuf {
		l.m.signal(s.Type)
		if s.Type == SignalThought && s.Chat != 0 && s.Text != "" {
			// A neuron (a plugin's, say) has something to think about: it becomes a
			// pending thought, which wakes cognition for the chat.
			l.st.Thoughts = append(l.st.Thoughts, Thought{Chat: s.Chat, Text: s.Text, At: s.At})
		}
	}
	for _, s := range sigs {
		if s.Type != SignalCommand {
			l.sigBuf = append(l.sigBuf, s)
		}
	}
	l.wakeBuf = l.deps.Aggregator.Decide(now, l.st, l.sigBuf, l.wakeBuf[:0])
	for i := range l.wakeBuf {
		l.bookkeep(now, &l.wakeBuf[i])
	}
	return l.wakeBuf
}

func (l *CoreLoop) step(now time.Time, sigs []Signal, tick bool) {
	if tick {
		l.m.ticks.Inc()
		l.retryDue(now)
	}
	for _, w := range l.Step(now, sigs) {
		l.dispatch(job{kind: jobWake, wake: w})
	}
	for _, s := range sigs {
		if s.Type == SignalCommand {
			l.dispatch(job{kind: jobCommand, command: s})
		}
	}
}

// observe updates relationships for incoming signals.
func (l *CoreLoop) observe(now time.Time, sigs []Signal) {
	for _, s := range sigs {
		l.m.signal(s.Type)
		if l.cfg.LogText && s.Text != "" {
			l.log.Debug("signal", "type", s.Type, "text", s.Text)
		}
		if s.Chat == 0 {
			continue
		}
		rel := l.st.Rel(s.Chat)
		if rel == nil {
			if s.Type != SignalUserMessage && s.Type != SignalCommand {
				continue
			}
			rel = l.st.Upsert(Relationship{Chat: s.Chat, User: s.User, Group: s.User != 0 && s.User != s.Chat})
		}
		if s.UserName != "" && !rel.Group {
			rel.Name = s.UserName
		}
		// A message or reaction ends the silence, habituation and the user's acks; a
		// command does not (/quiet followed by /status must keep the quiet).
		if s.Type == SignalUserMessage || s.Type == SignalReaction {
			at := s.At
			if at.IsZero() || at.After(now) {
				at = now
			}
			rel.MarkUserMessage(at)
			l.deps.Aggregator.ClearChat(s.Chat)
			l.acksDirt = true
			if at.After(l.st.LastActivity) {
				l.st.LastActivity = at
			}
		}
		l.dirty[s.Chat] = true
	}
}

// bookkeep records a dispatched wake in its relationship and snapshots the relationship
// into the wake.
func (l *CoreLoop) bookkeep(now time.Time, w *Wake) {
	l.m.wakes.WithLabelValues(w.Reason.Code).Inc()
	lvl := slog.LevelInfo
	if w.Reason.Code == ReasonUserMessage {
		lvl = slog.LevelDebug // one per message: too many for info
	}
	if l.log.Enabled(context.Background(), lvl) {
		// The reason's sentence may quote the user (a reminder's note): only with LogText.
		attrs := []any{"reason", w.Reason.Code}
		if l.cfg.LogText {
			attrs = append(attrs, "why", w.Reason.Text)
		}
		l.log.Log(context.Background(), lvl, "cognition wake", attrs...)
	}
	rel := l.st.Rel(w.Chat)
	if rel == nil {
		return
	}
	switch w.Reason.Code {
	case ReasonProactive, ReasonFollowup:
		rel.MarkProactiveWake(now, l.st.Location(rel), w.Reason.Code == ReasonFollowup)
		w.Profile = ProfileProactive
		l.dirty[w.Chat] = true
	case ReasonThought:
		// The wake carries the thoughts (as signals); the state need not keep them.
		l.forgetThoughts(w.Chat)
	}
	if w.Profile == "" {
		w.Profile = ProfileChat
	}
	if w.User == 0 {
		w.User = rel.User
	}
	if w.At.IsZero() {
		w.At = now
	}
	w.Rel = *rel
	w.Signals = append([]Signal(nil), w.Signals...)
}

func (l *CoreLoop) queue(chat int64) *chatQueue {
	q := l.chats[chat]
	if q == nil {
		q = &chatQueue{}
		l.chats[chat] = q
	}
	return q
}

// dispatch queues a job for its chat; wakes for user messages that arrive while a run is
// queued are folded into that run, if it is the last job queued (folding past a queued
// command would answer a later message before an earlier command).
func (l *CoreLoop) dispatch(j job) {
	chat := j.wake.Chat
	switch j.kind {
	case jobCommand:
		chat = j.command.Chat
	case jobDeliver:
		chat = j.deliver[0].Msg.Chat
	}
	q := l.queue(chat)
	if n := len(q.jobs); j.kind == jobWake && n > 0 {
		if p := &q.jobs[n-1]; p.kind == jobWake && foldable(p.wake, j.wake) {
			p.wake.Signals = append(p.wake.Signals, j.wake.Signals...)
			p.wake.Rel, p.wake.Loc = j.wake.Rel, j.wake.Loc
			l.m.folded.Inc()
			return
		}
	}
	q.jobs = append(q.jobs, j)
	if q.running {
		return
	}
	l.startNext(chat)
}

func foldable(queued, next Wake) bool {
	return queued.Reason.Code == next.Reason.Code && (next.Reason.Code == ReasonUserMessage || next.Reason.Code == ReasonProactive || next.Reason.Code == ReasonFollowup)
}

func (l *CoreLoop) startNext(chat int64) {
	q := l.chats[chat]
	if q == nil || q.running || l.stopping {
		return
	}
	if len(q.jobs) == 0 {
		delete(l.chats, chat)
		return
	}
	if l.running >= l.cfg.MaxConcurrent {
		return
	}
	j := q.jobs[0]
	q.jobs = q.jobs[1:]
	q.running = true
	l.running++
	view := CommandView{Now: l.deps.Clock.Now(), Acks: l.deps.Aggregator.Acks(l.deps.Clock.Now())}
	if rel := l.st.Rel(chat); rel != nil {
		view.Rel = *rel
		view.Loc = l.st.Location(rel)
	} else {
		view.Loc = l.st.Location(nil)
	}
	// While earlier messages of the chat wait for a retry, new ones queue behind them
	// instead of overtaking them.
	hold := j.kind != jobDeliver && l.retries[chat] != nil && len(l.retries[chat].entries) > 0
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		r := l.work(l.workCtx, chat, j, view, hold)
		l.done <- r
	}()
}

// finish applies a finished job's effects to the state and starts the chat's next job.
func (l *CoreLoop) finish(r result) {
	l.running--
	if q := l.chats[r.chat]; q != nil {
		q.running = false
	}
	if r.forget {
		// A flush may have written the relationship back since the handler deleted it:
		// the persister deletes it again.
		l.forgotten = append(l.forgotten, r.chat)
		l.st.Remove(r.chat)
		l.deps.Aggregator.ClearChat(r.chat)
		delete(l.dirty, r.chat)
		l.acksDirt = true
		l.forgetThoughts(r.chat)
		l.dropUndelivered(r.chat)
	} else if rel := l.st.Rel(r.chat); rel != nil {
		for _, k := range r.sent {
			rel.MarkSent(r.sentAt, k)
			l.m.sent.WithLabelValues(string(k)).Inc()
		}
		if len(r.sent) > 0 && r.sentAt.After(l.st.LastActivity) {
			l.st.LastActivity = r.sentAt
		}
		if r.status.Valid() {
			rel.Status = r.status
		}
		if r.blocked {
			rel.Dormant = true
		}
		if r.silent {
			// A proactive run that chose silence backs off like an unanswered message:
			// a user who has gone quiet must not cost max_per_day runs every day.
			rel.UnansweredProactive++
		}
		l.dirty[r.chat] = true
	}
	if r.thinking {
		l.st.LLMWork++
	}
	for _, in := range r.intents {
		l.applyInMemory(r.chat, in)
	}
	l.scheduleRetry(r)
	if rs := l.retries[r.chat]; r.forget && rs != nil {
		rs.at, rs.attempt = l.deps.Clock.Now(), 0 // only the confirmation waits: no backoff
	}
	l.startNext(r.chat)
	// A slot freed: start other chats waiting for one.
	for chat, q := range l.chats {
		if l.running >= l.cfg.MaxConcurrent {
			break
		}
		if !q.running {
			l.startNext(chat)
		}
	}
}

// dropUndelivered drops a forgotten chat's entries waiting for a (re)try: Forget deleted
// them from the outbox, so they must not be sent.
func (l *CoreLoop) dropUndelivered(chat int64) {
	n := 0
	if rs := l.retries[chat]; rs != nil {
		n += len(rs.entries)
		delete(l.retries, chat)
	}
	if q := l.chats[chat]; q != nil {
		q.jobs = slices.DeleteFunc(q.jobs, func(j job) bool {
			if j.kind == jobDeliver {
				n += len(j.deliver)
				return true
			}
			return false
		})
	}
	l.m.outboxPending.Sub(float64(n))
}

func (l *CoreLoop) forgetThoughts(chat int64) {
	kept := l.st.Thoughts[:0]
	for _, t := range l.st.Thoughts {
		if t.Chat != chat {
			kept = append(kept, t)
		}
	}
	l.st.Thoughts = kept
}

// applyInMemory applies the parts of intents that live in the loop's state.
func (l *CoreLoop) applyInMemory(chat int64, in Intent) {
	now := l.deps.Clock.Now()
	switch v := in.(type) {
	case Defer:
		until := v.Until
		if max := now.Add(24 * time.Hour); until.After(max) {
			until = max
		}
		l.deps.Aggregator.Ack(Ack{Key: AckKey(SignalSocialPressure, v.Chat), Kind: AckDeferred, Until: until,
			Firm: true, Reason: v.Reason, At: now})
		l.acksDirt = true
	case Ack:
		l.deps.Aggregator.Ack(v)
		l.acksDirt = true
	case EmitThought:
		l.st.Thoughts = append(l.st.Thoughts, Thought{Chat: v.Chat, Text: v.Text, At: now})
	case SetTimezone:
		if rel := l.st.Rel(v.Chat); rel != nil {
			rel.Timezone = v.Zone
			l.dirty[v.Chat] = true
		}
	case UpdateState:
		l.st.Energy = clamp01(l.st.Energy + v.EnergyDelta)
		l.st.Alertness = clamp01(l.st.Alertness + v.AlertnessDelta)
	}
}

func clamp01(v float64) float64 { return min(1, max(0, v)) }

// persistJob is a snapshot of state to write: the loop builds it, the persister writes it,
// so the tick never waits for the disk.
type persistJob struct {
	deletes []int64 // forgotten chats, removed before the saves
	rels    []Relationship
	acks    []Ack
	ackSave bool
}

// flush hands dirty relationships, acks and forgotten chats to the persister. If the
// persister is still busy with the last snapshot, the state stays dirty for the next
// flush; wait (on stop) blocks until it is taken.
func (l *CoreLoop) flush(wait bool) {
	if l.deps.StateStore == nil || (len(l.dirty) == 0 && !l.acksDirt && len(l.forgotten) == 0) {
		return
	}
	job := persistJob{deletes: l.forgotten, ackSave: l.acksDirt}
	for chat := range l.dirty {
		if r := l.st.Rel(chat); r != nil {
			job.rels = append(job.rels, *r)
		}
	}
	if l.acksDirt {
		job.acks = l.deps.Aggregator.Acks(l.deps.Clock.Now())
	}
	if wait {
		l.persist <- job
	} else {
		select {
		case l.persist <- job:
		default:
			return
		}
	}
	clear(l.dirty)
	l.acksDirt = false
	l.forgotten = nil
}

// persister writes the snapshots flush hands it, until the channel closes.
func (l *CoreLoop) persister(jobs <-chan persistJob) {
	for job := range jobs {
		for _, chat := range job.deletes {
			if err := l.deps.StateStore.DeleteRelationship(chat); err != nil {
				l.log.Error("delete forgotten relationship", "err", err)
			}
		}
		if len(job.rels) > 0 {
			if err := l.deps.StateStore.SaveRelationships(job.rels); err != nil {
				l.log.Error("save relationships", "err", err)
			}
		}
		if job.ackSave {
			if err := l.deps.StateStore.SaveAcks(job.acks); err != nil {
				l.log.Error("save acks", "err", err)
			}
		}
	}
}

// work runs one job off the loop goroutine: it may block on the model, the store and the
// network. It never panics out.
func (l *CoreLoop) work(ctx context.Context, chat int64, j job, view CommandView, hold bool) (r result) {
	r.chat, r.hold = chat, hold
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("chat job panicked", "chat_job", j.kind, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			l.m.panics.Inc()
			r.err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch j.kind {
	case jobDeliver:
		l.deliver(ctx, &r, j.deliver)
	case jobCommand:
		l.command(ctx, &r, j.command, view)
	case jobWake:
		l.think(ctx, &r, j.wake)
	}
	return r
}

func (l *CoreLoop) command(ctx context.Context, r *result, sig Signal, view CommandView) {
	rec := TurnRecord{Chat: sig.Chat, User: sig.User, At: l.deps.Clock.Now()}
	if sig.ID != 0 {
		rec.Done = []uint64{sig.ID}
	}
	if l.deps.Commands == nil {
		l.commitAndDeliver(ctx, r, rec)
		return
	}
	res, err := l.deps.Commands.Command(ctx, sig, view)
	if err != nil {
		l.log.Error("command failed", "command", commandName(sig.Text), "err", err)
		res.Reply = []SendMessage{{Chat: sig.Chat, Text: "Sorry, that didn't work. Please try again in a moment.", Kind: KindSystem, Plain: true}}
	}
	r.forget = res.Forget
	rec.Outbox = res.Reply
	rec.Intents = res.Intents
	r.intents = res.Intents
	l.commitAndDeliver(ctx, r, rec)
}

func commandName(text string) string {
	name, _, _ := strings.Cut(text, " ")
	if len(name) > 32 {
		name = name[:32]
	}
	return name
}

func (l *CoreLoop) think(ctx context.Context, r *result, w Wake) {
	var userText []string
	var done []uint64
	replyTo := 0
	for _, s := range w.Signals {
		if s.ID != 0 {
			done = append(done, s.ID)
		}
		if s.Type == SignalUserMessage {
			userText = append(userText, s.Text)
			replyTo = s.MessageID
		}
	}
	stopTyping := func() {}
	if len(userText) > 0 {
		stopTyping = l.typing(ctx, w.Chat)
	}
	r.thinking = true
	out, err := l.safeThink(ctx, w)
	stopTyping()
	now := l.deps.Clock.Now()
	rec := TurnRecord{Done: done, Chat: w.Chat, User: w.User, At: now}
	for _, s := range w.Signals {
		if s.Type == SignalUserMessage {
			at := s.At
			if at.IsZero() {
				at = now
			}
			rec.Turns = append(rec.Turns, Turn{Role: "user", Text: s.Text, At: at})
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopping: leave the signals in the inbox for the next start.
			r.err = err
			return
		}
		l.log.Error("cognition failed", "reason", w.Reason.Code, "err", err)
		if len(userText) == 0 {
			// Nobody is waiting for an answer; the signals are consumed.
			rec.Turns = nil
			l.commitAndDeliver(ctx, r, rec)
			return
		}
		out = Outcome{Intents: []Intent{SendMessage{Chat: w.Chat, Text: l.cfg.Apology, Kind: KindSystem, ReplyTo: replyTo, Plain: true}}}
	}
	r.status = out.Status
	for _, in := range out.Intents {
		m, ok := in.(SendMessage)
		if !ok {
			rec.Intents = append(rec.Intents, in)
			continue
		}
		if m.Chat == 0 {
			m.Chat = w.Chat
		}
		if strings.TrimSpace(m.Text) == "" {
			continue
		}
		if m.Kind == KindProactive || m.Kind == KindFollowup {
			if l.repeats(w.Chat, m.Text) {
				l.log.Info("proactive message repeats a recent one; not sent", "reason", w.Reason.Code)
				l.m.proactive.WithLabelValues("duplicate").Inc()
				continue
			}
		}
		rec.Outbox = append(rec.Outbox, m)
		if m.Kind != KindSystem {
			rec.Turns = append(rec.Turns, Turn{Role: "assistant", Text: m.Text, At: now, Kind: m.Kind})
		}
	}
	if w.Reason.Code == ReasonProactive || w.Reason.Code == ReasonFollowup {
		if len(rec.Outbox) == 0 {
			r.silent = true
			l.m.proactive.WithLabelValues("silent").Inc()
		} else {
			l.m.proactive.WithLabelValues("sent").Inc()
		}
		rel := w.Rel
		rec.Rel = &rel
	}
	r.intents = rec.Intents
	l.commitAndDeliver(ctx, r, rec)
	if m, ok := l.deps.Journal.(Maintainer); ok && len(rec.Turns) > 0 && r.err == nil {
		if err := m.Maintain(ctx, w.Chat); err != nil && ctx.Err() == nil {
			l.log.Warn("memory upkeep", "err", err)
		}
	}
}

// safeThink is Thinker.Think with a panic turned into an error: a user who wrote still
// gets the apology, and the signals are consumed rather than replayed (and panicking
// again) on every start.
func (l *CoreLoop) safeThink(ctx context.Context, w Wake) (out Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("cognition panicked", "reason", w.Reason.Code, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			l.m.panics.Inc()
			err = fmt.Errorf("cognition panicked: %v", p)
		}
	}()
	return l.deps.Thinker.Think(ctx, w)
}

// repeats reports whether text is too similar to one of the chat's recent messages
// (word-trigram Jaccard ≥ 0.5).
func (l *CoreLoop) repeats(chat int64, text string) bool {
	turns, err := l.deps.Journal.Recent(chat, 2*l.cfg.DuplicateWindow)
	if err != nil {
		l.log.Warn("read recent messages", "err", err)
		return false
	}
	seen := 0
	for i := len(turns) - 1; i >= 0 && seen < l.cfg.DuplicateWindow; i-- {
		if turns[i].Role != "assistant" {
			continue
		}
		seen++
		if Jaccard(Trigrams(text), Trigrams(turns[i].Text)) >= 0.5 {
			return true
		}
	}
	return false
}

// typing shows the typing indicator while the model works: first after TypingDelay (an
// instant answer needs none), then every 4 s. The returned stop never cancels a request
// in flight (that would cost the connection); the loop's WaitGroup owns the goroutine.
func (l *CoreLoop) typing(ctx context.Context, chat int64) (stop func()) {
	t, ok := l.deps.Sender.(Typer)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		timer := time.NewTimer(l.cfg.TypingDelay)
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			if err := t.Typing(ctx, chat); err != nil && ctx.Err() == nil {
				l.log.Debug("typing indicator", "err", err)
			}
			timer.Reset(4 * time.Second)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

func (l *CoreLoop) commitAndDeliver(ctx context.Context, r *result, rec TurnRecord) {
	if len(rec.Done) == 0 && len(rec.Turns) == 0 && len(rec.Outbox) == 0 && len(rec.Intents) == 0 && rec.Rel == nil {
		return
	}
	entries, err := l.deps.Journal.Commit(ctx, rec)
	if err != nil {
		l.log.Error("commit turn", "err", err)
		r.err = err
		return
	}
	l.m.outboxPending.Add(float64(len(entries)))
	if r.hold {
		r.retry = entries
		return
	}
	l.deliver(ctx, r, entries)
}

// deliver sends outbox entries in order. A blocked recipient drops the rest of them; any
// other failure leaves them in the outbox for the next start.
func (l *CoreLoop) deliver(ctx context.Context, r *result, entries []Outgoing) {
	for i, e := range entries {
		var err error
		if !r.blocked {
			err = l.deps.Sender.Send(ctx, e.Msg)
		}
		switch {
		case err == nil && !r.blocked:
			r.sent = append(r.sent, e.Msg.Kind)
			r.sentAt = l.deps.Clock.Now()
		case r.blocked:
			// Nobody can receive the rest: drop it below.
		case errors.Is(err, ErrBlocked):
			r.blocked = true
			l.log.Info("recipient blocked the bot; relationship is dormant; undelivered messages dropped")
		case errors.Is(err, ErrUndeliverable):
			l.log.Error("message cannot be delivered; dropped", "kind", e.Msg.Kind, "err", err)
			l.m.sendFailures.Inc()
		default:
			l.log.Error("send failed; kept in the outbox for another try", "kind", e.Msg.Kind, "err", err)
			l.m.sendFailures.Inc()
			r.err = err
			r.retry = append([]Outgoing(nil), entries[i:]...)
			var partial *PartialSendError
			if errors.As(err, &partial) {
				r.retry[0].Msg.SkipParts += partial.Sent
				if u, ok := l.deps.Journal.(OutboxUpdater); ok {
					if err := u.UpdateOutbox(e.ID, r.retry[0].Msg); err != nil {
						l.log.Error("record delivered parts in the outbox", "err", err)
					}
				}
			}
			return
		}
		if err := l.deps.Journal.MarkSent(e.ID); err != nil {
			l.log.Error("mark sent", "err", err)
		}
		l.m.outboxPending.Dec()
	}
}

// scheduleRetry keeps a chat's undelivered entries for another try with backoff
// (30 s doubling to 10 min); a successful delivery resets the backoff.
func (l *CoreLoop) scheduleRetry(r result) {
	rs := l.retries[r.chat]
	if len(r.retry) == 0 {
		if len(r.sent) > 0 && rs != nil {
			if len(rs.entries) == 0 {
				delete(l.retries, r.chat)
			} else {
				// Replies held behind the ones just delivered are due now.
				rs.at, rs.attempt = l.deps.Clock.Now(), 0
			}
		}
		return
	}
	if l.retries == nil {
		l.retries = map[int64]*retryState{}
	}
	if rs == nil {
		rs = &retryState{}
		l.retries[r.chat] = rs
	}
	if r.hold {
		rs.entries = append(rs.entries, r.retry...)
		if !rs.at.IsZero() {
			return // queued behind the waiting entries; their backoff stands
		}
	} else {
		// Not held: these entries are older than any held while they were tried.
		rs.entries = append(slices.Clone(r.retry), rs.entries...)
	}
	rs.at = l.deps.Clock.Now().Add(min(30*time.Second<<min(rs.attempt, 5), 10*time.Minute))
	rs.attempt++
}

// retryDue queues due retries at the front of their chats' queues, so later replies do not
// overtake them any further.
func (l *CoreLoop) retryDue(now time.Time) {
	for chat, rs := range l.retries {
		if len(rs.entries) == 0 || now.Before(rs.at) {
			continue
		}
		q := l.queue(chat)
		q.jobs = append([]job{{kind: jobDeliver, deliver: rs.entries}}, q.jobs...)
		rs.entries = nil
		l.startNext(chat)
	}
}

// SetSender sets the loop's sender (the channel), which is built after the loop because it
// submits to it. Call before Run.
func (l *CoreLoop) SetSender(s Sender) { l.deps.Sender = s }
