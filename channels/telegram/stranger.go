package telegram

import (
	"sync"
	"time"
)

// strangerLogEvery is how often one ignored sender is logged: often enough that the
// owner of a fresh bot finds their own user id in the log, rarely enough that a stranger
// cannot flood it.
const strangerLogEvery = time.Hour

// maxStrangers bounds the senders remembered; past it, entries older than an hour go.
const maxStrangers = 10_000

// stranger is the sender of an update anima ignores because they are not allowed.
type stranger struct {
	user, chat int64
	name       string // first name
	username   string // without '@'; may be empty
}

// strangers remembers when each stranger was last logged: last by user, and the same
// users in the order they were noted (order[head:]), so the ones noted over an hour ago
// go from the front, a few at a time, instead of a scan of the whole map for each new
// sender. A user is in order exactly once while in last: they are noted again only after
// their entry went.
type strangers struct {
	mu    sync.Mutex
	last  map[int64]time.Time
	order []noted
	head  int
}

// noted is one entry of strangers.order.
type noted struct {
	user int64
	at   time.Time
}

func newStrangers() *strangers { return &strangers{last: map[int64]time.Time{}} }

// due reports whether user is to be logged now, and if so notes that they were. It is
// O(1) amortised: each entry is appended once and dropped once.
func (s *strangers) due(user int64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if _, ok := s.last[user]; ok {
		return false
	}
	if len(s.last) >= maxStrangers {
		return false // a flood of new senders within the hour: the count still shows it
	}
	s.last[user] = now
	s.order = append(s.order, noted{user, now})
	return true
}

// expire forgets the users noted an hour or more before now. Entries are in the order
// noted; a clock that stepped back leaves a later one in front until it is an hour old.
func (s *strangers) expire(now time.Time) {
	for s.head < len(s.order) && now.Sub(s.order[s.head].at) >= strangerLogEvery {
		delete(s.last, s.order[s.head].user)
		s.order[s.head] = noted{}
		s.head++
	}
	// Reuse the slice's front once half of it is spent: each entry is copied at most
	// once per time the slice fills, so appends stay O(1) amortised.
	if s.head > 0 && s.head >= len(s.order)/2 {
		n := copy(s.order, s.order[s.head:])
		clear(s.order[n:])
		s.order, s.head = s.order[:n], 0
	}
}

// noteStranger logs an ignored sender at WARN, once an hour per sender, with what the
// owner needs to let them in.
func (c *Channel) noteStranger(s *stranger) {
	if !c.strangers.due(s.user, c.now()) {
		return
	}
	c.log.Warn("telegram message from a stranger ignored; add their user_id to telegram.allowed_users to let them talk to anima",
		"user_id", s.user, "chat_id", s.chat, "first_name", s.name, "username", s.username)
}
