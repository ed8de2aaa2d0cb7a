package speech

import (
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
)

// daily is each person's speech of the day (DailyUserSpeech): checked by a reply's
// estimated length before it is spoken, charged by the voice note's length after. It
// rolls over at the day's change in Zone, as the token counts do. Its map is made at the
// first charge. It is safe for concurrent use.
type daily struct {
	clock brain.Clock
	zone  *time.Location
	limit time.Duration // DailyUserSpeech; 0: no cap

	mu     sync.Mutex
	day    string
	millis map[int64]int // milliseconds of speech made for each user on day; nil until the first
}

func newDaily(limit time.Duration, zone *time.Location, clock brain.Clock) *daily {
	return &daily{clock: clock, zone: zone, limit: limit}
}

func (d *daily) dayOf(t time.Time) string { return t.In(d.zone).Format(time.DateOnly) }

// lockToday takes the lock on today's counts, rolling them over when the day changed.
func (d *daily) lockToday() {
	day := d.dayOf(d.clock.Now())
	d.mu.Lock()
	if d.day != day {
		d.day = day
		clear(d.millis)
	}
}

// allowed reports whether est more speech for user stays within their daily speech.
func (d *daily) allowed(user int64, est time.Duration) bool {
	if d.limit <= 0 || user == 0 {
		return true
	}
	d.lockToday()
	defer d.mu.Unlock()
	return time.Duration(d.millis[user])*time.Millisecond+est <= d.limit
}

// charge counts a voice note of length n made for user.
func (d *daily) charge(user int64, n time.Duration) {
	if user == 0 {
		return
	}
	d.lockToday()
	defer d.mu.Unlock()
	if d.millis == nil {
		d.millis = map[int64]int{}
	}
	d.millis[user] += int(n.Milliseconds())
}

// UserSpeech returns the day (YYYY-MM-DD in Zone) and the milliseconds of speech made for
// each user on it, for persisting across restarts.
func (s *Speech) UserSpeech() (day string, millis map[int64]int) {
	d := s.daily
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.millis) == 0 {
		return d.day, nil
	}
	millis = make(map[int64]int, len(d.millis))
	for u, n := range d.millis {
		millis[u] = n
	}
	return d.day, millis
}

// RestoreUserSpeech sets the milliseconds per user saved by an earlier run; a day other
// than today is ignored.
func (s *Speech) RestoreUserSpeech(day string, millis map[int64]int) {
	d := s.daily
	if len(millis) == 0 || day != d.dayOf(d.clock.Now()) {
		return
	}
	d.lockToday()
	defer d.mu.Unlock()
	if d.millis == nil {
		d.millis = map[int64]int{}
	}
	for u, n := range millis {
		if n > 0 {
			d.millis[u] = n
		}
	}
}

// SpeechToday returns the speech made today for user, for /status.
func (s *Speech) SpeechToday(user int64) time.Duration {
	d := s.daily
	d.lockToday()
	defer d.mu.Unlock()
	return time.Duration(d.millis[user]) * time.Millisecond
}

// ForgetUser drops the speech made for user today, so nothing kept is keyed by a
// forgotten user.
func (s *Speech) ForgetUser(user int64) {
	d := s.daily
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.millis, user)
}
