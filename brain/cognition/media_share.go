package cognition

import "time"

// This file holds what a user's media may cost a day: the check Perceive makes before a
// download against the user's token share, and the user's daily audio (DailyUserAudio),
// checked by a recording's stated duration before its download and charged after its
// transcription. Both roll over with the token counts (DefaultZone's day).

// usedUp reports whether user has spent their token share today. Unlike shareSpent it does
// not mark them told: Think tells them, once a day.
func (b *dailyBudget) usedUp(user int64) bool {
	b.lockToday()
	defer b.mu.Unlock()
	return b.spentLocked(user)
}

// audioAllowed reports whether a recording of seconds from user stays within their daily
// audio.
func (b *dailyBudget) audioAllowed(user int64, seconds int) bool {
	if b.userAudio <= 0 || user == 0 {
		return true
	}
	b.lockToday()
	defer b.mu.Unlock()
	return time.Duration(b.audio[user]+max(seconds, 0))*time.Second <= b.userAudio
}

// chargeAudio charges a transcription to user: its seconds to their daily audio, its
// tokens to their share.
func (b *dailyBudget) chargeAudio(user int64, seconds, tokens int) {
	if user == 0 {
		return
	}
	b.addUser(user, tokens)
	if seconds <= 0 {
		return
	}
	b.lockToday()
	defer b.mu.Unlock()
	b.audio[user] += seconds
	b.dirty = true
}

// audioUsage returns the day and the seconds of each user's recordings transcribed on it.
func (b *dailyBudget) audioUsage() (day string, seconds map[int64]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	seconds = make(map[int64]int, len(b.audio))
	for u, n := range b.audio {
		seconds[u] = n
	}
	return b.day, seconds
}

// restoreAudio sets the seconds per user saved by an earlier run; a day other than today
// is ignored.
func (b *dailyBudget) restoreAudio(day string, seconds map[int64]int) {
	b.restoreDay(day, func() { setPositive(b.audio, seconds) })
}

// UserAudio returns the day and the seconds of each user's recordings transcribed on it,
// for persisting across restarts (UserUsage's changed covers them).
func (c *Cognition) UserAudio() (day string, seconds map[int64]int) { return c.budget.audioUsage() }

// RestoreUserAudio sets the seconds per user saved by an earlier run; a day other than
// today is ignored.
func (c *Cognition) RestoreUserAudio(day string, seconds map[int64]int) {
	c.budget.restoreAudio(day, seconds)
}
