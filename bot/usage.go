package bot

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
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
	ForgetUser(user int64)
}

// speechUsage is the speech made for each user that day (speech.Speech); nil without a
// speech model.
type speechUsage interface {
	UserSpeech() (day string, millis map[int64]int)
	RestoreUserSpeech(day string, millis map[int64]int)
	ForgetUser(user int64)
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

// forget drops user from u and reports whether u held them.
func (u *savedUsage) forget(user int64) bool {
	_, spent := u.Users[user]
	_, audio := u.Audio[user]
	_, speech := u.Speech[user]
	told := slices.Contains(u.Told, user)
	delete(u.Users, user)
	delete(u.Audio, user)
	delete(u.Speech, user)
	u.Told = slices.DeleteFunc(u.Told, func(t int64) bool { return t == user })
	return spent || audio || speech || told
}

var usageKey = []byte("llm_usage")

// restoreUsage loads the day's token count saved by the last run, so a restart does not
// reset llm.daily_token_budget, the users' shares, their daily audio or (sp, when there
// is speech) their daily speech.
func restoreUsage(store *storage.Store, m usageMeter, sp speechUsage) error {
	var u savedUsage
	if _, err := store.Get(storage.BucketState, usageKey, &u); err != nil {
		return err
	}
	m.RestoreUsage(u.Day, u.Tokens)
	m.RestoreUserUsage(u.Day, u.Users, u.Told)
	m.RestoreUserAudio(u.Day, u.Audio)
	if sp != nil {
		sp.RestoreUserSpeech(u.Day, u.Speech)
	}
	return nil
}

// usageKeeper saves the meters' counts in the store every minute while they change, and
// once more on stop; and forgets a user's (ForgetUser).
type usageKeeper struct {
	store *storage.Store
	m     usageMeter
	sp    speechUsage // nil without a speech model

	mu   sync.Mutex // orders a save with a user's erasure: neither writes what the other dropped
	last savedUsage
}

func newUsageKeeper(store *storage.Store, m usageMeter, sp speechUsage) *usageKeeper {
	return &usageKeeper{store: store, m: m, sp: sp}
}

// Run saves the counts every minute while they change, and once more when ctx ends.
func (k *usageKeeper) Run(ctx context.Context) error {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return k.save()
		case <-t.C:
			if err := k.save(); err != nil {
				return err
			}
		}
	}
}

func (k *usageKeeper) save() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	day, tokens := k.m.Usage()
	_, users, told, changed := k.m.UserUsage()
	_, audio := k.m.UserAudio()
	u := savedUsage{Day: day, Tokens: tokens, Users: users, Told: told, Audio: audio}
	if k.sp != nil {
		// Speech keeps its own day: its counts are saved under the tokens' day only when
		// they are that day's (a day's first speech also charges its tokens).
		if sday, speech := k.sp.UserSpeech(); sday == day {
			u.Speech = speech
		}
	}
	changed = changed || !maps.Equal(u.Speech, k.last.Speech)
	if (u.Day == k.last.Day && u.Tokens == k.last.Tokens && !changed) || day == "" {
		return nil
	}
	if err := k.store.Put(storage.BucketState, usageKey, u); err != nil {
		return err
	}
	k.last = u
	return nil
}

// ForgetUser drops user's counts from the meter and from the saved ones, whose old value
// stays in the file's freed pages until a compaction: erased reports that the store
// held some, and then records the erasure owed (storage.Tx.MarkErasure) in the same
// commit.
func (k *usageKeeper) ForgetUser(user int64) (erased bool, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m.ForgetUser(user)
	if k.sp != nil {
		k.sp.ForgetUser(user)
	}
	k.last.forget(user)
	err = k.store.Update(func(tx *storage.Tx) error {
		erased = false
		var u savedUsage
		if ok, err := tx.Get(storage.BucketState, usageKey, &u); err != nil || !ok {
			return err
		}
		if !u.forget(user) {
			return nil
		}
		if err := tx.Put(storage.BucketState, usageKey, u); err != nil {
			return err
		}
		erased = true
		return tx.MarkErasure()
	})
	if err != nil {
		return false, fmt.Errorf("forget the usage of user %d: %w", user, err)
	}
	return erased, nil
}
