package telegram

import (
	"context"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
)

// pacer spaces sends: at most one per perChat per chat (counted from the end of the
// previous send to the chat) and one per global overall. A send first waits until its
// chat may send, and only then reserves the next free global slot (next-allowed-time
// style, first come, first served): a chat waiting out its own second never holds a
// global slot that other chats could use.
type pacer struct {
	perChat time.Duration
	// perGroup spaces messages to group chats (negative ids): Telegram allows a bot about
	// 20 messages a minute in one group.
	perGroup time.Duration
	global   time.Duration

	mu         sync.Mutex
	globalNext time.Time
	chatNext   map[int64]time.Time
	pruneAt    int // prune the map when it reaches this size
}

func newPacer(perChat, global time.Duration) *pacer {
	return &pacer{perChat: perChat, perGroup: 3 * perChat, global: global, chatNext: map[int64]time.Time{}, pruneAt: 256}
}

// interval is the spacing between two messages to chat.
func (p *pacer) interval(chat int64) time.Duration {
	if chat < 0 {
		return p.perGroup
	}
	return p.perChat
}

// reserve returns the time a send to chat may happen and books it.
func (p *pacer) reserve(chat int64, now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := now
	if p.globalNext.After(at) {
		at = p.globalNext
	}
	if n, ok := p.chatNext[chat]; ok && n.After(at) {
		at = n
	}
	p.globalNext = at.Add(p.global)
	p.chatNext[chat] = at.Add(p.interval(chat))
	if len(p.chatNext) >= p.pruneAt {
		// Entries in the past constrain nothing: drop them so the map stays bounded by the
		// chats sent to within the last perChat (plus queued reservations).
		for k, n := range p.chatNext {
			if !n.After(now) {
				delete(p.chatNext, k)
			}
		}
		p.pruneAt = max(256, 2*len(p.chatNext))
	}
	return at
}

// done notes that a send to chat finished at t: the next may start only perChat later.
// Telegram sees a message somewhere between the request's start and its answer, so
// spacing from the answer is what guarantees Telegram sees the sends perChat apart.
func (p *pacer) done(chat int64, t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := t.Add(p.interval(chat)); n.After(p.chatNext[chat]) {
		p.chatNext[chat] = n
	}
}

// chatReady is when chat may send next (without booking anything).
func (p *pacer) chatReady(chat int64) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chatNext[chat]
}

// wait blocks until a send to chat is allowed or ctx ends. Sends to one chat are
// serialised by the caller (chatLocks), so nobody books the chat's slot meanwhile.
func (p *pacer) wait(ctx context.Context, chat int64) error {
	if d := time.Until(p.chatReady(chat)); d > 0 {
		if err := brain.Sleep(ctx, d); err != nil {
			return err
		}
	}
	at := p.reserve(chat, time.Now())
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	return brain.Sleep(ctx, d)
}

// chatLocks serialises sends per chat so the parts of two messages never interleave.
// Entries live only while someone holds or waits for the lock.
type chatLocks struct {
	mu sync.Mutex
	m  map[int64]*chatLock
}

type chatLock struct {
	ch   chan struct{} // capacity 1: holding the token is holding the lock
	refs int
}

func newChatLocks() *chatLocks { return &chatLocks{m: map[int64]*chatLock{}} }

// lock takes chat's lock, or returns ctx's error; on success call the returned unlock.
func (l *chatLocks) lock(ctx context.Context, chat int64) (func(), error) {
	l.mu.Lock()
	cl, ok := l.m[chat]
	if !ok {
		cl = &chatLock{ch: make(chan struct{}, 1)}
		l.m[chat] = cl
	}
	cl.refs++
	l.mu.Unlock()

	release := func() {
		l.mu.Lock()
		cl.refs--
		if cl.refs == 0 {
			delete(l.m, chat)
		}
		l.mu.Unlock()
	}
	select {
	case cl.ch <- struct{}{}:
		return func() { <-cl.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// size is the number of chats with a lock entry (for tests).
func (l *chatLocks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
