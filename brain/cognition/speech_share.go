package cognition

import "time"

// This file holds each user's daily speech (DailyUserSpeech): checked by a reply's
// estimated length before it is spoken, charged by the voice note's length after. It
// rolls over with the token counts (DefaultZone's day). The map is made at the first
// charge: without speech, nothing of it exists.

// speechAllowed reports whether est more speech for user stays within their daily speech.
func (b *dailyBudget) speechAllowed(user int64, est time.Duration) bool {
	if b.userSpeech <= 0 || user == 0 {
		return true
	}
	b.lockToday()
	defer b.mu.Unlock()
	return time.Duration(b.speech[user])*time.Millisecond+est <= b.userSpeech
}

// chargeSpeech charges a voice note to user: its length to their daily speech, its
// tokens to their share.
func (b *dailyBudget) chargeSpeech(user int64, d time.Duration, tokens int) {
	if user == 0 {
		return
	}
	b.addUser(user, tokens)
	b.lockToday()
	defer b.mu.Unlock()
	if b.speech == nil {
		b.speech = map[int64]int{}
	}
	b.speech[user] += int(d.Milliseconds())
	b.dirty = true
}

// speechUsage returns the day and the milliseconds of speech made for each user on it.
func (b *dailyBudget) speechUsage() (day string, millis map[int64]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.speech) == 0 {
		return b.day, nil
	}
	millis = make(map[int64]int, len(b.speech))
	for u, n := range b.speech {
		millis[u] = n
	}
	return b.day, millis
}

// UserSpeech returns the day and the milliseconds of speech made for each user on it,
// for persisting across restarts (UserUsage's changed covers them).
func (c *Cognition) UserSpeech() (day string, millis map[int64]int) { return c.budget.speechUsage() }

// RestoreUserSpeech sets the milliseconds per user saved by an earlier run; a day other
// than today is ignored.
func (c *Cognition) RestoreUserSpeech(day string, millis map[int64]int) {
	if len(millis) == 0 {
		return
	}
	c.budget.restoreDay(day, func() {
		if c.budget.speech == nil {
			c.budget.speech = map[int64]int{}
		}
		setPositive(c.budget.speech, millis)
	})
}

// SpeechToday returns the speech made today for user, for /status.
func (c *Cognition) SpeechToday(user int64) time.Duration {
	b := c.budget
	b.lockToday()
	defer b.mu.Unlock()
	return time.Duration(b.speech[user]) * time.Millisecond
}
