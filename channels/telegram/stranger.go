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

// strangers remembers when each stranger was last logged.
type strangers struct {
	mu   sync.Mutex
	last map[int64]time.Time
}

func newStrangers() *strangers { return &strangers{last: map[int64]time.Time{}} }

// due reports whether user is to be logged now, and if so notes that they were.
func (s *strangers) due(user int64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at, ok := s.last[user]; ok && now.Sub(at) < strangerLogEvery {
		return false
	}
	if len(s.last) >= maxStrangers {
		for u, at := range s.last {
			if now.Sub(at) >= strangerLogEvery {
				delete(s.last, u)
			}
		}
		if len(s.last) >= maxStrangers {
			return false // a flood of new senders within the hour: the count still shows it
		}
	}
	s.last[user] = now
	return true
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
