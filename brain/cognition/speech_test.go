package cognition_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/ogg"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

const speaker = 42

// speechEnv is a cognition with a speech model: gpt-4o-mini-tts, voice coral, a 20 s
// daily speech per user and a 2,000-token share.
func speechEnv(t *testing.T, cfg func(*cognition.Config)) *env {
	t.Helper()
	return newEnv(t, setup{cfg: func(c *cognition.Config) {
		c.SpeechModel, c.Voice, c.VoiceStyle = "gpt-4o-mini-tts", "coral", "warm and unhurried"
		c.DailyUserSpeech, c.DailyUserTokenBudget = 20*time.Second, 2000
		if cfg != nil {
			cfg(c)
		}
	}})
}

func TestSpeak(t *testing.T) {
	t.Parallel()
	e := speechEnv(t, nil)
	text := "That's **wonderful** news — tell me [everything](https://example.com)!" // 45 characters said: 3 s
	v, err := e.c.Speak(context.Background(), speaker, text)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := ogg.Duration(v.Audio); err != nil || d != v.Duration || v.Bytes != len(v.Audio) {
		t.Fatalf("voice = %v, %d bytes (%d); Ogg says %v, %v", v.Duration, v.Bytes, len(v.Audio), d, err)
	}
	said := "That's wonderful news — tell me everything!"
	sp := e.srv.Speeches()
	if len(sp) != 1 || sp[0].Input != said || sp[0].Format != "opus" || sp[0].Voice != "coral" ||
		sp[0].Model != "gpt-4o-mini-tts" || sp[0].Instructions != "warm and unhurried" {
		t.Fatalf("speech requests = %+v", sp)
	}
	chars := len([]rune(said))
	if got := e.c.TokensToday(); got != chars {
		t.Errorf("tokens today = %d, want %d (a token per character)", got, chars)
	}
	_, users, _, _ := e.c.UserUsage()
	if users[speaker] != chars {
		t.Errorf("the user's share = %d, want %d", users[speaker], chars)
	}
	if got, want := e.c.SpeechToday(speaker), v.Duration.Truncate(time.Millisecond); got != want {
		t.Errorf("speech today = %v, want %v", got, want)
	}
	for name, want := range map[string]float64{
		"anima_speech_characters_total":    float64(chars),
		"anima_speech_bytes_total":         float64(v.Bytes),
		"anima_speech_audio_seconds_total": v.Duration.Seconds(),
	} {
		if got := metric(t, e, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metric(t, e, "anima_speech_requests_total", "outcome", "ok"); got != 1 {
		t.Errorf("ok requests = %v", got)
	}
}

func TestSpeakRefuses(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 200) // 1,000 characters: over a minute
	for _, tc := range []struct {
		name    string
		cfg     func(*cognition.Config)
		before  []string // spoken first, for the same user
		text    string
		outcome string
	}{
		{"too long", nil, nil, long, "too_long"},
		{"the daily speech is spent", nil, []string{strings.Repeat("a", 150), strings.Repeat("b", 120)}, strings.Repeat("c", 60), "limited"},
		{"the share is spent", func(c *cognition.Config) { c.DailyUserSpeech = 0; c.DailyUserTokenBudget = 100 }, []string{strings.Repeat("a", 100)}, "hi", "limited"},
		{"the budget is spent", func(c *cognition.Config) { c.DailyTokenBudget = 50 }, []string{strings.Repeat("a", 50)}, "hi", "limited"},
		{"nothing to say", nil, nil, "https://example.com", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := speechEnv(t, tc.cfg)
			for _, b := range tc.before {
				if _, err := e.c.Speak(context.Background(), speaker, b); err != nil {
					t.Fatal(err)
				}
			}
			before := len(e.srv.Speeches())
			if _, err := e.c.Speak(context.Background(), speaker, tc.text); !errors.Is(err, brain.ErrSpeechRefused) {
				t.Fatalf("Speak = %v, want ErrSpeechRefused", err)
			}
			if n := len(e.srv.Speeches()); n != before {
				t.Errorf("a refused reply reached the endpoint (%d requests, want %d)", n, before)
			}
			if tc.outcome != "" && metric(t, e, "anima_speech_requests_total", "outcome", tc.outcome) != 1 {
				t.Errorf("anima_speech_requests_total{outcome=%q} is not 1", tc.outcome)
			}
			// Another user still has all of theirs.
			if _, err := e.c.Speak(context.Background(), speaker+1, "hi"); err != nil && tc.name != "the budget is spent" {
				t.Errorf("another user: %v", err)
			}
		})
	}
}

func TestSpeakFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		answer      openaitest.Speaker
		unsupported bool
	}{
		{"server error", func(openaitest.Speech) ([]byte, int) { return nil, http.StatusInternalServerError }, false},
		{"bad request", func(openaitest.Speech) ([]byte, int) { return []byte("input has a problem"), http.StatusBadRequest }, false},
		{"no speech endpoint", func(openaitest.Speech) ([]byte, int) { return nil, http.StatusNotFound }, true},
		{"unknown model", func(openaitest.Speech) ([]byte, int) {
			return []byte("The model `gpt-4o-mini-tts` does not exist"), http.StatusBadRequest
		}, true},
		{"not Ogg/Opus", func(openaitest.Speech) ([]byte, int) { return []byte("ID3 an mp3"), 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := speechEnv(t, nil)
			e.srv.SetSpeaker(tc.answer)
			_, err := e.c.Speak(context.Background(), speaker, "hello there")
			if err == nil || errors.Is(err, brain.ErrSpeechRefused) || errors.Is(err, brain.ErrSpeechUnsupported) != tc.unsupported {
				t.Fatalf("Speak = %v; want a failure, unsupported %v", err, tc.unsupported)
			}
			e.srv.SetSpeaker(nil)
			_, err = e.c.Speak(context.Background(), speaker, "hello again")
			if tc.unsupported != (err != nil) || tc.unsupported && !errors.Is(err, brain.ErrSpeechUnsupported) {
				t.Fatalf("the next Speak = %v; speech off for the process: %v", err, tc.unsupported)
			}
			if want := 1 + map[bool]int{true: 0, false: 1}[tc.unsupported]; len(e.srv.Speeches()) != want {
				t.Errorf("requests = %d, want %d", len(e.srv.Speeches()), want)
			}
			if got := e.c.TokensToday(); tc.unsupported && got != 0 {
				t.Errorf("a failed request was charged %d tokens", got)
			}
		})
	}
}

// Without a speech model nothing of speech exists: no metric is registered and Speak
// says the endpoint cannot speak.
func TestNoSpeechModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, setup{})
	if _, err := e.c.Speak(context.Background(), speaker, "hi"); !errors.Is(err, brain.ErrSpeechUnsupported) {
		t.Fatalf("Speak = %v", err)
	}
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "anima_speech_") {
			t.Errorf("%s registered without a speech model", mf.GetName())
		}
	}
}

// spokenReply is a reply of 200 characters: about 13 s of speech.
var spokenReply = strings.Repeat("It sounds like a lovely day. ", 7)[:200]

// BenchmarkSpeak is one spoken reply through the real go-openai client and the fake
// endpoint over HTTP: Sayable, the request, the Ogg/Opus read and its length parsed.
func BenchmarkSpeak(b *testing.B) {
	srv := openaitest.New(b)
	c := cognition.New(cognition.Config{FastModel: fast, SpeechModel: "gpt-4o-mini-tts", RequestTimeout: 5 * time.Second},
		cognition.NewClient(srv.URL(), "test-key", 5*time.Second), nil, nil, cognition.Options{Registerer: prometheus.NewRegistry()})
	var v brain.Voice
	for b.Loop() {
		var err error
		if v, err = c.Speak(context.Background(), speaker, spokenReply); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(v.Bytes), "audio_bytes")
	b.ReportMetric(v.Duration.Seconds(), "audio_s")
}

func TestSayable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "Hello, Ann!", "Hello, Ann!"},
		{"emphasis", "That's **really** *lovely* and __bold__ _too_.", "That's really lovely and bold too."},
		{"snake case stays", "my_file_name is fine", "my_file_name is fine"},
		{"a star in a sum", "2 * 3 is 6", "2 3 is 6"},
		{"heading and bullets", "# Plan\n- eggs\n* milk\n1. bread", "Plan\neggs\nmilk\nbread"},
		{"link said as its text", "See [the recipe](https://example.com/r) or https://x.io/y now.", "See the recipe or now."},
		{"code", "Run `go test` then:\n```go\nfmt.Println(1)\n```\ndone", "Run go test then:\ndone"},
		{"quote and rule", "> so true\n---\nyes", "so true\nyes"},
		{"blank lines collapse", "a\n\n\n\nb", "a\n\nb"},
		{"strike", "~~no~~ yes", "no yes"},
		{"only a link", "https://example.com", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := cognition.Sayable(tc.in)
			if got != tc.want {
				t.Fatalf("Sayable(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "*`#>[]|") {
				t.Fatalf("Sayable(%q) = %q keeps a mark a voice would read aloud", tc.in, got)
			}
		})
	}
}

func FuzzSayable(f *testing.F) {
	f.Add("**hi** [x](y) `z`\n# h\n- a")
	f.Fuzz(func(t *testing.T, s string) {
		got := cognition.Sayable(s)
		if strings.Contains(got, "**") || strings.Contains(got, "`") {
			t.Fatalf("Sayable(%q) = %q", s, got)
		}
	})
}
