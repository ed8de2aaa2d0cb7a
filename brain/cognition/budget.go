package cognition

import (
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
)

// dailyBudget is the accountant of what runs spend a day (DefaultZone's day): the tokens of
// every run against DailyTokenBudget, each user's tokens against their share
// (DailyUserTokenBudget) with whether they were told it is spent, and each user's
// transcribed audio against DailyUserAudio (media_share.go). All counts roll over together
// when the day changes (speech keeps its own, brain/speech). It is safe for concurrent use.
type dailyBudget struct {
	clock     brain.Clock
	zone      *time.Location
	daily     int           // DailyTokenBudget; 0: unlimited
	userDaily int           // DailyUserTokenBudget; 0: no share
	userAudio time.Duration // DailyUserAudio; 0: no cap

	mu  sync.Mutex
	day string
	sum int
	// per user, on day: tokens spent, and who was told their share is spent
	user  map[int64]int
	told  map[int64]bool
	audio map[int64]int // seconds of each user's recordings transcribed on day
	dirty bool          // changed since userUsage was last read
}

func newDailyBudget(cfg Config, clock brain.Clock) *dailyBudget {
	return &dailyBudget{
		clock: clock, zone: cfg.DefaultZone,
		daily: cfg.DailyTokenBudget, userDaily: cfg.DailyUserTokenBudget, userAudio: cfg.DailyUserAudio,
		user:  map[int64]int{},
		told:  map[int64]bool{},
		audio: map[int64]int{},
	}
}

// today is the number of tokens spent so far today.
func (b *dailyBudget) today() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.day != b.dayOf(b.clock.Now()) {
		return 0
	}
	return b.sum
}

func (b *dailyBudget) dayOf(t time.Time) string { return t.In(b.zone).Format(time.DateOnly) }

// usage returns the day and the tokens spent on it.
func (b *dailyBudget) usage() (day string, tokens int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.day, b.sum
}

// restore sets the tokens spent on day, as saved by an earlier run; a day other than today
// is ignored.
func (b *dailyBudget) restore(day string, tokens int) {
	if day != b.dayOf(b.clock.Now()) || tokens < 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.day, b.sum = day, tokens
}

// add counts n tokens spent today.
func (b *dailyBudget) add(n int) {
	b.lockToday()
	defer b.mu.Unlock()
	b.sum += n
}

// lockToday takes the lock on today's counts, rolling them over when the day changed.
func (b *dailyBudget) lockToday() {
	day := b.dayOf(b.clock.Now())
	b.mu.Lock()
	b.rollLocked(day)
}

// rollLocked starts a new day's counts when day is not b.day.
func (b *dailyBudget) rollLocked(day string) {
	if b.day != day {
		b.day, b.sum = day, 0
		clear(b.user)
		clear(b.told)
		clear(b.audio)
		b.dirty = true
	}
}

// addUser charges n tokens to user's share of the day.
func (b *dailyBudget) addUser(user int64, n int) {
	if user == 0 || n <= 0 {
		return
	}
	b.lockToday()
	defer b.mu.Unlock()
	b.user[user] += n
	b.dirty = true
}

// shareSpent reports whether user has spent their share today and, if so, whether they are
// to be told now (the first time today).
func (b *dailyBudget) shareSpent(user int64) (spent, tell bool) {
	if b.userDaily <= 0 || user == 0 {
		return false, false
	}
	b.lockToday()
	defer b.mu.Unlock()
	if !b.spentLocked(user) {
		return false, false
	}
	if b.told[user] {
		return true, false
	}
	b.told[user] = true
	b.dirty = true
	return true, true
}

// spentLocked reports whether user's runs have spent their share today (the day rolled).
func (b *dailyBudget) spentLocked(user int64) bool {
	return b.userDaily > 0 && user != 0 && b.user[user] >= b.userDaily
}

// forgetUser drops user's counts of the day: tokens, the told mark and audio. The day's
// total keeps their tokens.
func (b *dailyBudget) forgetUser(user int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, spent := b.user[user]
	_, told := b.told[user]
	_, audio := b.audio[user]
	delete(b.user, user)
	delete(b.told, user)
	delete(b.audio, user)
	b.dirty = b.dirty || spent || told || audio
}

// untold undoes the "told" mark of shareSpent.
func (b *dailyBudget) untold(user int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.told, user)
}

// spent reports whether the daily token budget is used up.
func (b *dailyBudget) spent() bool {
	return b.daily > 0 && b.today() >= b.daily
}

// userUsage returns the day and, per user, the tokens spent on it and whether they were
// told their share is spent; changed says whether any of it changed since the last call.
func (b *dailyBudget) userUsage() (day string, spent map[int64]int, told []int64, changed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	changed, b.dirty = b.dirty, false
	spent = make(map[int64]int, len(b.user))
	for u, n := range b.user {
		spent[u] = n
	}
	for u := range b.told {
		told = append(told, u)
	}
	return b.day, spent, told, changed
}

// restoreUserUsage sets the per-user counts saved by an earlier run; a day other than
// today is ignored.
func (b *dailyBudget) restoreUserUsage(day string, spent map[int64]int, told []int64) {
	b.restoreDay(day, func() {
		setPositive(b.user, spent)
		for _, u := range told {
			b.told[u] = true
		}
	})
}

// restoreDay runs set under the lock on the day's counts when day is today, to restore
// what an earlier run saved; another day is ignored.
func (b *dailyBudget) restoreDay(day string, set func()) {
	if day != b.dayOf(b.clock.Now()) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rollLocked(day)
	set()
}

// setPositive sets dst[u] to every positive count n of src.
func setPositive(dst, src map[int64]int) {
	for u, n := range src {
		if n > 0 {
			dst[u] = n
		}
	}
}

// overBudget is Think's first step: a wake other than a user message gets no run once the
// daily token budget is spent, nor any wake of a user whose share is spent. skip says the
// wake ends here, with out (a spent share's notice, told once a day in answer to a user
// message, or nothing).
func (c *Cognition) overBudget(w brain.Wake, profile brain.Profile) (out brain.Outcome, skip bool) {
	if w.Reason.Code != brain.ReasonUserMessage && c.budget.spent() {
		c.m.runs.WithLabelValues(string(profile), "budget").Inc()
		c.log.Info("daily token budget spent, skipping wake", "chat", w.Chat, "reason", w.Reason.Code)
		return brain.Outcome{}, true
	}
	spent, tell := c.budget.shareSpent(w.User)
	if !spent {
		return brain.Outcome{}, false
	}
	c.m.runs.WithLabelValues(string(profile), "budget").Inc()
	c.refused.Refused(brain.LimitUserTokens)
	c.log.Info("the user's daily token share is spent, skipping wake", "chat", w.Chat, "reason", w.Reason.Code)
	if tell && w.Reason.Code == brain.ReasonUserMessage {
		return brain.Outcome{Intents: []brain.Intent{brain.SendMessage{Chat: w.Chat, Text: c.cfg.BudgetNotice,
			Kind: brain.KindSystem, Plain: true, ReplyTo: replyTo(w)}}}, true
	}
	if tell {
		c.budget.untold(w.User) // tell them when they next write
	}
	return brain.Outcome{}, true
}

// TokensToday is the number of tokens spent so far today (DefaultZone's day).
func (c *Cognition) TokensToday() int { return c.budget.today() }

// Usage returns the day (YYYY-MM-DD in DefaultZone) and the tokens spent on it, for
// persisting the daily budget across restarts.
func (c *Cognition) Usage() (day string, tokens int) { return c.budget.usage() }

// RestoreUsage sets the tokens spent on day, as saved by an earlier run; a day other than
// today is ignored.
func (c *Cognition) RestoreUsage(day string, tokens int) { c.budget.restore(day, tokens) }

// UserUsage returns the day and, per user, the tokens spent on it and whether they were
// told their share is spent, for persisting across restarts; changed says whether any of
// it changed since the last call.
func (c *Cognition) UserUsage() (day string, spent map[int64]int, told []int64, changed bool) {
	return c.budget.userUsage()
}

// ForgetUser drops the user's counts of the day (tokens, whether they were told their
// share is spent, transcribed audio), so nothing kept is keyed by a forgotten user: their
// share starts over, while the day's total (DailyTokenBudget) keeps what they spent.
func (c *Cognition) ForgetUser(user int64) { c.budget.forgetUser(user) }

// RestoreUserUsage sets the per-user counts saved by an earlier run; a day other than
// today is ignored.
func (c *Cognition) RestoreUserUsage(day string, spent map[int64]int, told []int64) {
	c.budget.restoreUserUsage(day, spent, told)
}

// TokensAllowed reports whether tokens may be spent for user now (0: for no one in
// particular): false once the day's budget, or user's share, is spent. Unlike a run it
// tells no one (memory asks it before an embedding).
func (c *Cognition) TokensAllowed(user int64) bool {
	return !c.budget.spent() && !c.budget.usedUp(user)
}

// ChargeTokens counts tokens spent outside a run (memory's embeddings) in the day's budget
// and in user's share (0: no one's).
func (c *Cognition) ChargeTokens(user int64, tokens int) {
	if tokens <= 0 {
		return
	}
	c.budget.add(tokens)
	c.budget.addUser(user, tokens)
}
