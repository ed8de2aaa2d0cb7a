package cognition_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// countingFiles is a MediaFetcher over files that counts the downloads asked for.
type countingFiles struct {
	files
	mu sync.Mutex
	n  int
}

func (f *countingFiles) Fetch(ctx context.Context, m brain.Media) ([]byte, string, error) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return f.files.Fetch(ctx, m)
}

func (f *countingFiles) fetched() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// perceiveAndThink does what the core loop does with a wake carrying media: Perceive,
// then Think on it.
func perceiveAndThink(t *testing.T, e *env, w brain.Wake, f brain.MediaFetcher) (brain.Wake, brain.Outcome) {
	t.Helper()
	w = e.c.Perceive(context.Background(), w, f)
	return w, think(t, e, w)
}

// TestMediaAfterUserShare: once a user's share is spent, their voice notes, photos and
// files are not downloaded nor transcribed (six 10-minute notes used to be, 3,600 s of
// audio charged to the global budget alone, with no answer sent); the first message gets
// the share's one notice, as a text would, the rest nothing; each file is recorded with a
// note and counted as limited. A transcription is charged to its user's share.
func TestMediaAfterUserShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.DailyUserTokenBudget = 1000
		c.BudgetNotice = "enough for today"
		c.TranscriptionModel, c.Vision = "whisper-1", true
	}})
	e.srv.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply {
		return openaitest.Reply{Content: "hi", PromptTokens: 300, CompletionTokens: 100}
	})
	store := &countingFiles{files: files{"v": []byte("a long story"), "p": []byte("\xff\xd8jpeg"), "d": []byte("# notes")}}

	// A 30 s voice note: 300 tokens of transcription, then 400 of the run, to user 7.
	perceiveAndThink(t, e, mediaWake("", brain.Media{Kind: brain.MediaVoice, FileID: "v", Duration: 30, Mime: "audio/ogg"}), store)
	if _, spent, _, _ := e.c.UserUsage(); spent[7] != 700 {
		t.Errorf("user 7 spent %d tokens, want 700 (300 of them the transcription's)", spent[7])
	}
	think(t, e, userWake("tell me more")) // 1100: the share is spent
	tokens, fetched := e.c.TokensToday(), store.fetched()

	var notices []string
	for i := range 6 {
		w, out := perceiveAndThink(t, e, mediaWake("", brain.Media{Kind: brain.MediaVoice, FileID: "v", Duration: 600, Mime: "audio/ogg"}), store)
		if s := w.Signals[0]; s.Text != "[voice 10:00, not heard]" || s.Media.Notice != "" {
			t.Errorf("voice note %d: text %q, notice %q; want the note and no notice of its own", i, s.Text, s.Media.Notice)
		}
		for _, m := range sends(out) {
			notices = append(notices, m.Text)
		}
	}
	photo, _ := perceiveAndThink(t, e, mediaWake("look", brain.Media{Kind: brain.MediaPhoto, FileID: "p", Mime: "image/jpeg"}), store)
	doc, _ := perceiveAndThink(t, e, mediaWake("", brain.Media{Kind: brain.MediaDocument, FileID: "d", Name: "a.md", Mime: "text/markdown"}), store)
	if photo.Signals[0].Text != "[photo, not seen] look" || doc.Signals[0].Text != "[file a.md, not read]" {
		t.Errorf("photo %q, file %q; want them noted as not seen and not read", photo.Signals[0].Text, doc.Signals[0].Text)
	}
	if len(notices) != 1 || notices[0] != "enough for today" {
		t.Errorf("answers after the share: %q, want the one notice", notices)
	}
	if n := store.fetched() - fetched; n != 0 {
		t.Errorf("%d downloads after the share, want none", n)
	}
	if n := len(e.srv.Transcriptions()); n != 1 {
		t.Errorf("%d transcriptions, want 1 (before the share was spent)", n)
	}
	if got := e.c.TokensToday(); got != tokens {
		t.Errorf("tokens today went from %d to %d after the share", tokens, got)
	}
	if got := metric(t, e, "anima_media_total", "kind", "voice", "outcome", "limited"); got != 6 {
		t.Errorf("anima_media_total{voice,limited} = %v, want 6", got)
	}

	// The next day the share is whole again.
	e.clock.Advance(24 * time.Hour)
	w, _ := perceiveAndThink(t, e, mediaWake("", brain.Media{Kind: brain.MediaVoice, FileID: "v", Duration: 5, Mime: "audio/ogg"}), store)
	if w.Signals[0].Text != "[voice 0:05] a long story" {
		t.Errorf("the next day: %q, want a transcript", w.Signals[0].Text)
	}
}

// TestDailyUserAudio: a user's recordings are transcribed up to DailyUserAudio a day, by
// their stated duration; one that would go past it is not downloaded and gets a notice
// (counted in anima_limits_refused_total{limit="user_audio"}), while a shorter one that
// fits still is heard. Other users are not affected, a restored count holds after a
// restart, and the next day starts afresh.
func TestDailyUserAudio(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{
		cfg: func(c *cognition.Config) {
			c.TranscriptionModel, c.DailyUserAudio = "whisper-1", 30*time.Minute
		},
		opts: func(o *cognition.Options) { o.Refusals = brain.NewRefusals(o.Registerer) },
	})
	store := &countingFiles{files: files{"v": []byte("words")}}
	voice := func(seconds int) brain.Wake {
		return mediaWake("", brain.Media{Kind: brain.MediaVoice, FileID: "v", Duration: seconds, Mime: "audio/ogg"})
	}
	hear := func(e *env, w brain.Wake) brain.Signal {
		t.Helper()
		return e.c.Perceive(context.Background(), w, store).Signals[0]
	}
	for range 2 {
		if s := hear(e, voice(600)); s.Media.Notice != "" {
			t.Fatalf("a 10-minute note within the day's audio: %q", s.Media.Notice)
		}
	}
	if s := hear(e, voice(590)); s.Media.Notice != "" { // 29:50 in all
		t.Fatalf("a note that fits: %q", s.Media.Notice)
	}
	fetched, transcribed := store.fetched(), len(e.srv.Transcriptions())
	s := hear(e, voice(11)) // 30:01
	want := "I've listened to all the voice I can for one day (30 minutes) — could you type it for me? I'll be all ears again tomorrow."
	if s.Text != "[voice 0:11, not heard]" || s.Media.Notice != want {
		t.Errorf("past the day's audio: text %q, notice %q", s.Text, s.Media.Notice)
	}
	if s := hear(e, voice(10)); s.Media.Notice != "" || s.Text != "[voice 0:10] words" {
		t.Errorf("a note that still fits: text %q, notice %q", s.Text, s.Media.Notice)
	}
	if got := store.fetched() - fetched; got != 1 {
		t.Errorf("%d downloads, want 1 (only the note that fits)", got)
	}
	if got := len(e.srv.Transcriptions()) - transcribed; got != 1 {
		t.Errorf("%d transcriptions, want 1", got)
	}
	if got := metric(t, e, "anima_limits_refused_total", "limit", "user_audio"); got != 1 {
		t.Errorf("anima_limits_refused_total{user_audio} = %v, want 1", got)
	}
	if got := metric(t, e, "anima_media_total", "kind", "voice", "outcome", "limited"); got != 1 {
		t.Errorf("anima_media_total{voice,limited} = %v, want 1", got)
	}

	other := voice(60)
	other.User, other.Signals[0].User = 8, 8
	if s := hear(e, other); s.Media.Notice != "" {
		t.Errorf("another user: %q", s.Media.Notice)
	}

	day, seconds := e.c.UserAudio()
	if day != t0.Format(time.DateOnly) || seconds[7] != 1800 || seconds[8] != 60 {
		t.Errorf("UserAudio = %s %v, want 1800 s for 7 and 60 s for 8", day, seconds)
	}
	e2 := newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.TranscriptionModel, c.DailyUserAudio = "whisper-1", 30*time.Minute
	}})
	e2.c.RestoreUserAudio(day, seconds)
	if s := hear(e2, voice(1)); s.Media.Notice != want {
		t.Errorf("after a restart: notice %q", s.Media.Notice)
	}

	e.clock.Advance(24 * time.Hour)
	if s := hear(e, voice(600)); s.Media.Notice != "" {
		t.Errorf("the next day: %q", s.Media.Notice)
	}
}
