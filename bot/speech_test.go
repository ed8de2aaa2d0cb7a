package bot

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/speech"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

// TestNoSpeechModel: without llm.speech_model nothing of speech is built — no Speech (the
// loop gets no Speaker, every reply goes as text), no anima_speech_ metric registered;
// with one, speech is built and its metrics are.
func TestNoSpeechModel(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"", "gpt-4o-mini-tts"} {
		cfg := config.Default()
		cfg.LLM.BaseURL = openaitest.New(t).URL()
		cfg.LLM.APIKey = "test-key"
		cfg.LLM.SpeechModel = model
		cfg.Storage.Path = filepath.Join(t.TempDir(), "anima.db")
		reg := prometheus.NewRegistry()
		parts, err := Assemble(cfg, storagetest.Open(t, cfg.Storage.Path), Options{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		if (parts.Speech != nil) != (model != "") || (parts.speechUsage() != nil) != (model != "") {
			t.Errorf("speech model %q: Speech = %v", model, parts.Speech)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, mf := range mfs {
			found = found || strings.HasPrefix(mf.GetName(), "anima_speech_")
		}
		if found != (model != "") {
			t.Errorf("speech model %q: anima_speech_ metrics registered = %v", model, found)
		}
	}
}

// speechParts is a cognition and its speech over the fake endpoint, on clock.
func speechParts(t *testing.T, clock *braintest.Clock) (*cognition.Cognition, *speech.Speech) {
	t.Helper()
	srv := openaitest.New(t)
	client := cognition.NewClient(srv.URL(), "test-key", 5*time.Second)
	cog := cognition.New(cognition.Config{FastModel: "fast", DefaultZone: time.UTC}, client, nil, nil, cognition.Options{Clock: clock})
	return cog, speech.New(speech.Config{Model: "gpt-4o-mini-tts", Zone: time.UTC}, client, cog, speech.Options{Clock: clock})
}

// The speech made for each user today is saved with the day's tokens and restored on the
// next start, so a restart does not reset limits.speech_per_user_per_day; a day's speech
// is never saved under another day (speech keeps its own day), and /forget drops the
// user's from speech and from the saved usage.
func TestUsageKeepsUserSpeech(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	clock := braintest.NewClock(time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC))
	cog, sp := speechParts(t, clock)
	const user, other = 7, 8
	for _, u := range []int64{user, other} {
		if _, err := sp.Speak(context.Background(), u, "hello there, how was the walk?"); err != nil {
			t.Fatal(err)
		}
	}
	keeper := newUsageKeeper(store, cog, sp)
	if err := keeper.save(); err != nil {
		t.Fatal(err)
	}
	saved := func() savedUsage {
		t.Helper()
		var u savedUsage
		if _, err := store.Get(storage.BucketState, usageKey, &u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	if u := saved(); u.Speech[user] != int(sp.SpeechToday(user).Milliseconds()) || u.Speech[user] == 0 {
		t.Fatalf("saved speech = %v, want %v for user %d", u.Speech, sp.SpeechToday(user), user)
	}

	cog2, sp2 := speechParts(t, clock)
	if err := restoreUsage(store, cog2, sp2); err != nil {
		t.Fatal(err)
	}
	if got, want := sp2.SpeechToday(user), sp.SpeechToday(user); got != want || got == 0 {
		t.Errorf("restored speech today = %v, want %v", got, want)
	}

	if _, err := keeper.ForgetUser(user); err != nil {
		t.Fatal(err)
	}
	if u := saved(); u.Speech[user] != 0 || u.Speech[other] == 0 {
		t.Errorf("saved speech after /forget = %v; want only user %d's", u.Speech, other)
	}
	if got := sp.SpeechToday(user); got != 0 {
		t.Errorf("speech still counts the forgotten user: %v", got)
	}

	// The next day, tokens are spent before any speech: yesterday's speech is not saved as
	// today's.
	clock.Advance(2 * time.Hour)
	cog.ChargeTokens(user, 10)
	if err := keeper.save(); err != nil {
		t.Fatal(err)
	}
	if u := saved(); u.Day != "2026-11-26" || len(u.Speech) != 0 {
		t.Errorf("saved usage the next day = %+v; want no speech under %s", u, u.Day)
	}
}
