package bot

import (
	"context"
	"time"

	"github.com/anima-bot/anima/storage"
)

// usageMeter is the daily token count of cognition, in all and per user, and the seconds
// of each user's recordings transcribed that day.
type usageMeter interface {
	Usage() (day string, tokens int)
	RestoreUsage(day string, tokens int)
	UserUsage() (day string, spent map[int64]int, told []int64, changed bool)
	RestoreUserUsage(day string, spent map[int64]int, told []int64)
	UserAudio() (day string, seconds map[int64]int)
	RestoreUserAudio(day string, seconds map[int64]int)
	UserSpeech() (day string, millis map[int64]int)
	RestoreUserSpeech(day string, millis map[int64]int)
}

type savedUsage struct {
	Day    string `json:"day"`
	Tokens int    `json:"tokens"`
	// Users are the tokens each user's runs spent on Day; Told, the users told their
	// share (llm.daily_user_token_budget) is spent.
	Users map[int64]int `json:"users,omitempty"`
	Told  []int64       `json:"told,omitempty"`
	// Audio are the seconds of each user's recordings transcribed on Day
	// (limits.audio_per_user_per_day).
	Audio map[int64]int `json:"audio,omitempty"`
	// Speech are the milliseconds of speech made for each user on Day
	// (limits.speech_per_user_per_day).
	Speech map[int64]int `json:"speech,omitempty"`
}

var usageKey = []byte("llm_usage")

// restoreUsage loads the day's token count saved by the last run, so a restart does not
// reset llm.daily_token_budget, the users' shares or their daily audio.
func restoreUsage(store *storage.Store, m usageMeter) error {
	var u savedUsage
	if _, err := store.Get(storage.BucketState, usageKey, &u); err != nil {
		return err
	}
	m.RestoreUsage(u.Day, u.Tokens)
	m.RestoreUserUsage(u.Day, u.Users, u.Told)
	m.RestoreUserAudio(u.Day, u.Audio)
	m.RestoreUserSpeech(u.Day, u.Speech)
	return nil
}

// keepUsage saves the token count every minute while it changes, and once more on stop.
func keepUsage(ctx context.Context, store *storage.Store, m usageMeter) error {
	var last savedUsage
	save := func() error {
		day, tokens := m.Usage()
		_, users, told, changed := m.UserUsage()
		_, audio := m.UserAudio()
		_, speech := m.UserSpeech()
		u := savedUsage{Day: day, Tokens: tokens, Users: users, Told: told, Audio: audio, Speech: speech}
		if (u.Day == last.Day && u.Tokens == last.Tokens && !changed) || day == "" {
			return nil
		}
		if err := store.Put(storage.BucketState, usageKey, u); err != nil {
			return err
		}
		last = u
		return nil
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return save()
		case <-t.C:
			if err := save(); err != nil {
				return err
			}
		}
	}
}
