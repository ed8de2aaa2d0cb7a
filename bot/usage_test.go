package bot

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// oneFile is a MediaFetcher that serves the same bytes for every file.
type oneFile []byte

func (f oneFile) Fetch(context.Context, brain.Media) ([]byte, string, error) {
	return f, "audio/ogg", nil
}

// The seconds of each user's recordings transcribed today are saved on stop and restored
// on the next start, so a restart does not reset limits.audio_per_user_per_day.
func TestUsageKeepsUserAudio(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	srv := openaitest.New(t)
	clock := braintest.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	cfg := cognition.Config{FastModel: "fast", TranscriptionModel: "whisper-1", DailyUserAudio: 10 * time.Minute}
	build := func() *cognition.Cognition {
		return cognition.New(cfg, cognition.NewClient(srv.URL(), "test-key", 5*time.Second), nil, nil, cognition.Options{Clock: clock})
	}
	voice := func(seconds int) brain.Wake {
		return brain.Wake{Chat: 42, User: 7, Signals: []brain.Signal{{Type: brain.SignalUserMessage, Chat: 42, User: 7,
			Media: &brain.Media{Kind: brain.MediaVoice, FileID: "v", Duration: seconds, Mime: "audio/ogg"}}}}
	}

	before := build()
	if s := before.Perceive(context.Background(), voice(540), oneFile("OggS")).Signals[0]; s.Media.Notice != "" {
		t.Fatalf("a 9-minute note: %q", s.Media.Notice)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run saves once more on stop
	if err := newUsageKeeper(store, before, nil).Run(ctx); err != nil {
		t.Fatal(err)
	}

	after := build()
	if err := restoreUsage(store, after, nil); err != nil {
		t.Fatal(err)
	}
	if _, secs := after.UserAudio(); secs[7] != 540 {
		t.Errorf("restored audio = %v, want 540 s for user 7", secs)
	}
	if s := after.Perceive(context.Background(), voice(120), oneFile("OggS")).Signals[0]; s.Media.Notice == "" {
		t.Error("after a restart, a note past the day's audio was heard")
	}
}

// TestForgetDropsUsageAndSent: /forget yes drops the user's counts of the day (tokens,
// the told mark, audio) from cognition and from the saved usage, in a commit that owes an
// erasure, and the private chat's sent ids, stored and waiting; a save after it writes
// none of them back. Other users' counts and the day's total stay.
func TestForgetDropsUsageAndSent(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	const user, other = 1003, 1004
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := braintest.NewClock(now)
	srv := openaitest.New(t)
	cog := cognition.New(cognition.Config{FastModel: "fast", DefaultZone: time.UTC, DailyUserTokenBudget: 10_000}, cognition.NewClient(srv.URL(), "test-key", 5*time.Second), nil, nil, cognition.Options{Clock: clock})
	day := now.Format(time.DateOnly)
	cog.RestoreUsage(day, 5700)
	cog.RestoreUserUsage(day, map[int64]int{user: 5000, other: 700}, []int64{user})
	cog.RestoreUserAudio(day, map[int64]int{user: 60, other: 30})
	keeper := newUsageKeeper(store, cog, nil)
	if err := keeper.save(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{55, 56} {
		if err := store.RecordSent(user, id); err != nil {
			t.Fatal(err)
		}
		if id == 55 {
			if err := store.FlushSent(); err != nil {
				t.Fatal(err)
			}
		}
	}

	cmds := &commands{forget: userForgetter{store: store, usage: keeper}}
	res, err := cmds.Command(context.Background(), brain.Signal{Chat: user, User: user, Text: "/forget yes"},
		loop.CommandView{Now: now, Loc: time.UTC})
	if err != nil || len(res.Reply) != 1 || !res.Forget {
		t.Fatalf("/forget yes = %+v, %v", res, err)
	}
	if owed, err := store.ErasurePending(); err != nil || !owed {
		t.Errorf("ErasurePending = %v, %v after /forget; want true", owed, err)
	}
	if err := keeper.save(); err != nil { // the minute's save
		t.Fatal(err)
	}
	if err := store.FlushSent(); err != nil {
		t.Fatal(err)
	}
	var saved savedUsage
	if _, err := store.Get(storage.BucketState, usageKey, &saved); err != nil {
		t.Fatal(err)
	}
	want := savedUsage{Day: day, Tokens: 5700, Users: map[int64]int{other: 700}, Audio: map[int64]int{other: 30}}
	if !reflect.DeepEqual(saved, want) {
		t.Errorf("saved usage after /forget = %+v, want %+v", saved, want)
	}
	if _, spent, told, _ := cog.UserUsage(); spent[user] != 0 || slices.Contains(told, user) {
		t.Errorf("cognition still counts the user: spent %v, told %v", spent, told)
	}
	if _, secs := cog.UserAudio(); secs[user] != 0 {
		t.Errorf("cognition still counts the user's audio: %v", secs)
	}
	for _, id := range []int{55, 56} {
		if ok, err := store.Sent(user, id); err != nil || ok {
			t.Errorf("Sent(%d, %d) = %v, %v after /forget; want false", user, id, ok, err)
		}
	}
	var stored []byte
	if err := store.View(func(tx *storage.Tx) error {
		v, err := tx.Peek(storage.BucketSent, brain.ID64(user))
		stored = bytes.Clone(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if stored != nil {
		t.Errorf("the chat's entry in sent is back after /forget: %x", stored)
	}
}
