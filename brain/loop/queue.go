package loop

import (
	"context"

	"github.com/anima-bot/anima/brain"
)

type jobKind int

const (
	jobWake jobKind = iota
	jobCommand
	jobDeliver
	jobNotice // a system message of the loop's own (the rate limit's notice)
	jobDrop
)

// job is one unit of a chat's work: a cognition run, a command, outbox entries to
// (re)deliver, or held messages to drop unanswered.
type job struct {
	kind    jobKind
	wake    brain.Wake
	command brain.Signal
	deliver []brain.Outgoing
	notice  brain.SendMessage
	drop    brain.TurnRecord
	dead    *brain.DeadLetter // what a drop keeps (held messages expired)
}

// chatQueue is a chat's jobs: one runs at a time, in order.
type chatQueue struct {
	running bool
	jobs    []job
	waiting bool // in the loop's waitingSlot: its next job waits for a free slot
}

// result is what a finished job reports back to the loop goroutine, which applies it.
type result struct {
	chat     int64
	delivery delivery // what became of the job's outbox entries
	status   brain.ConversationStatus
	forget   int64 // a chat whose stored data a command deleted (0: none)
	thinking bool
	silent   bool // a proactive run that chose to say nothing
	intents  []brain.Intent
	held     *brain.Wake // a run that could not reach the model: its messages wait
	thought  bool        // the Thinker answered
	err      error
}

func (l *Loop) queue(chat int64) *chatQueue {
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
func (l *Loop) dispatch(ctx context.Context, j job) {
	chat := j.wake.Chat
	switch j.kind {
	case jobCommand:
		chat = j.command.Chat
	case jobDeliver:
		chat = j.deliver[0].Msg.Chat
	case jobNotice:
		chat = j.notice.Chat
	case jobDrop:
		chat = j.drop.Chat
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
	l.startNext(ctx, chat)
}

// foldable says whether next may join the queued wake: wakes of the same reason fold
// (user messages, reminders due); in a group only the same sender's (every run answers
// exactly one member; private chats fold whoever wrote). A wake of anima's own initiative
// never meets a queued job: the Stepper leaves it out for a busy chat (deferBusy).
func foldable(queued, next brain.Wake) bool {
	if (queued.Rel.Group || next.Rel.Group) && queued.User != next.User {
		return false
	}
	switch next.Reason.Code {
	case brain.ReasonUserMessage, brain.ReasonSchedule:
		return queued.Reason.Code == next.Reason.Code
	}
	return false
}

// startNext starts chat's next job off the loop goroutine, unless the chat is busy, the
// loop is stopping or every slot is taken. ctx is the runs' context (Run's work context,
// which the loop's own functions pass along): cancelled only when a stop's grace is over.
func (l *Loop) startNext(ctx context.Context, chat int64) {
	q := l.chats[chat]
	if q == nil || q.running || l.stopping {
		return
	}
	if len(q.jobs) == 0 {
		delete(l.chats, chat)
		return
	}
	if l.running >= l.cfg.MaxConcurrent {
		if !q.waiting {
			q.waiting = true
			l.waitingSlot = append(l.waitingSlot, chat)
		}
		return
	}
	j := q.jobs[0]
	if _, throttled := l.throttled[chat]; throttled && (j.kind == jobWake || j.kind == jobCommand) {
		return // throttled (rate limited): releaseThrottled starts it
	}
	if w, limited := limitedWake(j); limited {
		start, notice, ok := l.admit(chat, w)
		switch {
		case ok:
			j = notice // the wake stays queued behind it
		case !start:
			return
		default:
			q.jobs = q.jobs[1:]
		}
	} else {
		q.jobs = q.jobs[1:]
	}
	if j.kind == jobWake && j.wake.Reason.Code == brain.ReasonUserMessage && !l.held.take(&j.wake) {
		// A release whose messages were answered or dropped meanwhile.
		l.startNext(ctx, chat)
		return
	}
	q.running = true
	l.running++
	view := CommandView{Now: l.deps.Clock.Now(), Acks: l.deps.Aggregator.Acks(l.deps.Clock.Now())}
	if rel := l.st.Rel(chat); rel != nil {
		view.Rel = *rel
		view.Loc = l.st.Location(rel)
	} else {
		view.Loc = l.st.Location(nil)
	}
	// While earlier messages of the chat wait for a retry, new ones are queued behind them
	// instead of overtaking them.
	inBackoff := j.kind != jobDeliver && l.retries.inBackoff(chat)
	noticed := l.held.noticed(chat)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		r := l.work(ctx, chat, j, view, inBackoff, noticed)
		l.done <- r
	}()
}

// finish applies a finished job's effects to the state and starts the chat's next job.
//
// The job keeps its slot until the end: a chat started by what finish applies (a held
// chat released, a drop, the chat's own next job) queues behind the chats already
// waiting for a slot, and the freed slot goes to the first of them.
func (l *Loop) finish(ctx context.Context, r result) {
	if q := l.chats[r.chat]; q != nil {
		q.running = false
	}
	if r.forget != 0 {
		l.forget(ctx, r.forget)
		l.forgetMember(ctx, r.forget)
	}
	if rel := l.st.Rel(r.chat); rel != nil && r.forget != r.chat {
		d := r.delivery
		for _, k := range d.sent {
			rel.MarkSent(d.sentAt, k)
			l.m.sent.WithLabelValues(string(k)).Inc()
		}
		for _, o := range d.openers {
			rel.RecordOpener(o)
		}
		if len(d.sent) > 0 && d.sentAt.After(l.st.LastActivity) {
			l.st.LastActivity = d.sentAt
		}
		if r.status.Valid() {
			rel.Status = r.status
		}
		if d.blocked {
			rel.Dormant = true
		}
		if r.silent {
			// A proactive run that chose silence backs off like an unanswered message:
			// a user who has gone quiet must not cost max_per_day runs every day.
			rel.UnansweredProactive++
		}
		l.changed.rels[r.chat] = true
	}
	if r.thinking {
		l.st.LLMWork++
	}
	l.settleHeld(ctx, r)
	for _, in := range r.intents {
		if brain.HomeOf(in)&brain.InLoop != 0 {
			l.applyInLoop(in)
		}
	}
	now := l.deps.Clock.Now()
	l.retries.settle(r.chat, r.delivery, now)
	if r.forget == r.chat {
		l.retries.dueNow(r.chat, now) // only the confirmation waits: no backoff
	}
	l.startNext(ctx, r.chat)
	// The slot frees: start the chats waiting for one, first come first served.
	l.running--
	for len(l.waitingSlot) > 0 && l.running < l.cfg.MaxConcurrent {
		chat := l.waitingSlot[0]
		l.waitingSlot = l.waitingSlot[1:]
		if q := l.chats[chat]; q != nil {
			q.waiting = false
			l.startNext(ctx, chat)
		}
	}
}

// forget drops everything the loop holds about a chat whose handler deleted it.
func (l *Loop) forget(ctx context.Context, chat int64) {
	// A flush may have written the relationship back since the handler deleted it: the
	// persister deletes it again.
	l.changed.forgotten = append(l.changed.forgotten, chat)
	l.st.Remove(chat)
	l.deps.Aggregator.ClearChat(chat)
	if ids := l.stepper.forget(chat); len(ids) > 0 {
		// Each quotes a message of the chat's; with no next wake to carry them, they
		// would wait in the inbox for good (the handler's erasure deletes them too, in
		// its own commit: this consumes them whatever deleted the chat).
		l.stepper.m.reactionsDropped.Add(float64(len(ids)))
		l.dispatch(ctx, job{kind: jobDrop, drop: brain.TurnRecord{Chat: chat, Done: ids, At: l.deps.Clock.Now()}})
	}
	delete(l.changed.rels, chat)
	l.changed.acks = true
	forgetThoughts(l.st, chat)
	l.dropUndelivered(chat)
	l.dropHeld(ctx, chat)
}
