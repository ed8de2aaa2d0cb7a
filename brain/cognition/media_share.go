package cognition

import "time"

// This file holds what a user's media may cost a day: the check Perceive makes before a
// download against the user's token share, and the user's daily audio (DailyUserAudio),
// checked by a recording's stated duration before its download and charged after its
// transcription. Both roll over with the token counts (DefaultZone's day).

// shareUsedUp reports whether user has spent their token share today. Unlike
// userShareSpent it does not mark them told: Think tells them, once a day.
func (c *Cognition) shareUsedUp(user int64) bool {
	day := c.day(c.clock.Now())
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	c.rollLocked(day)
	return c.spentLocked(user)
}

// audioAllowed reports whether a recording of seconds from user stays within their daily
// audio.
func (c *Cognition) audioAllowed(user int64, seconds int) bool {
	if c.cfg.DailyUserAudio <= 0 || user == 0 {
		return true
	}
	day := c.day(c.clock.Now())
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	c.rollLocked(day)
	return time.Duration(c.audUser[user]+max(seconds, 0))*time.Second <= c.cfg.DailyUserAudio
}

// chargeAudio charges a transcription to user: its seconds to their daily audio, its
// tokens to their share.
func (c *Cognition) chargeAudio(user int64, seconds, tokens int) {
	if user == 0 {
		return
	}
	c.addUserTokens(user, tokens)
	if seconds <= 0 {
		return
	}
	day := c.day(c.clock.Now())
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	c.rollLocked(day)
	c.audUser[user] += seconds
	c.tokDirty = true
}

// UserAudio returns the day and the seconds of each user's recordings transcribed on it,
// for persisting across restarts (UserUsage's changed covers them).
func (c *Cognition) UserAudio() (day string, seconds map[int64]int) {
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	seconds = make(map[int64]int, len(c.audUser))
	for u, n := range c.audUser {
		seconds[u] = n
	}
	return c.tokDay, seconds
}

// RestoreUserAudio sets the seconds per user saved by an earlier run; a day other than
// today is ignored.
func (c *Cognition) RestoreUserAudio(day string, seconds map[int64]int) {
	if day != c.day(c.clock.Now()) {
		return
	}
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	c.rollLocked(day)
	for u, n := range seconds {
		if n > 0 {
			c.audUser[u] = n
		}
	}
}
