package bot

import (
	"context"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
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
	cancel() // keepUsage saves once more on stop
	if err := keepUsage(ctx, store, before); err != nil {
		t.Fatal(err)
	}

	after := build()
	if err := restoreUsage(store, after); err != nil {
		t.Fatal(err)
	}
	if _, secs := after.UserAudio(); secs[7] != 540 {
		t.Errorf("restored audio = %v, want 540 s for user 7", secs)
	}
	if s := after.Perceive(context.Background(), voice(120), oneFile("OggS")).Signals[0]; s.Media.Notice == "" {
		t.Error("after a restart, a note past the day's audio was heard")
	}
}
