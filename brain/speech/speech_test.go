package speech_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/ogg"
	"github.com/anima-bot/anima/brain/speech"
)

const speaker = 42

// env is a Speech charging a cognition (the Meter bot wires), both asking the fake
// endpoint through the real go-openai client, on the manual clock.
type env struct {
	s     *speech.Speech
	cog   *cognition.Cognition
	srv   *openaitest.Server
	reg   *prometheus.Registry
	clock *braintest.Clock
}

// config is what an env is built with: speech's and the accountant's.
type config struct {
	speech    speech.Config
	cognition cognition.Config
}

// speechEnv is a Speech with gpt-4o-mini-tts, voice coral, a 20 s daily speech per user,
// over a cognition with a 2,000-token share.
func speechEnv(t testing.TB, cfg func(*config)) *env {
	t.Helper()
	c := config{
		speech: speech.Config{Model: "gpt-4o-mini-tts", Voice: "coral", Style: "warm and unhurried",
			DailyUserSpeech: 20 * time.Second, Timeout: 5 * time.Second, Zone: time.UTC},
		cognition: cognition.Config{FastModel: "fast-model", RequestTimeout: 5 * time.Second, DefaultZone: time.UTC,
			DailyUserTokenBudget: 2000},
	}
	if cfg != nil {
		cfg(&c)
	}
	srv := openaitest.New(t)
	t.Cleanup(func() {
		if v := srv.Violations(); len(v) != 0 {
			t.Errorf("fake server saw invalid requests:\n%s", strings.Join(v, "\n"))
		}
	})
	e := &env{srv: srv, reg: prometheus.NewRegistry(), clock: braintest.NewClock(time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC))}
	client := cognition.NewClient(srv.URL(), "test-key", c.cognition.RequestTimeout)
	e.cog = cognition.New(c.cognition, client, nil, nil, cognition.Options{Clock: e.clock})
	e.s = speech.New(c.speech, client, e.cog, speech.Options{Registerer: e.reg, Clock: e.clock})
	return e
}

// metric returns the value of the counter or gauge name with the given label pairs (0
// if absent).
func metric(t *testing.T, e *env, name string, labels ...string) float64 {
	t.Helper()
	v, _ := braintest.Metric(t, e.reg, name, labels...)
	return v
}

func TestSpeak(t *testing.T) {
	t.Parallel()
	e := speechEnv(t, nil)
	text := "That's **wonderful** news — tell me [everything](https://example.com)!" // 45 characters said: 3 s
	v, err := e.s.Speak(context.Background(), speaker, text)
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
	if got := e.cog.TokensToday(); got != chars {
		t.Errorf("tokens today = %d, want %d (a token per character)", got, chars)
	}
	_, users, _, _ := e.cog.UserUsage()
	if users[speaker] != chars {
		t.Errorf("the user's share = %d, want %d", users[speaker], chars)
	}
	if got, want := e.s.SpeechToday(speaker), v.Duration.Truncate(time.Millisecond); got != want {
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
		cfg     func(*config)
		before  []string // spoken first, for the same user
		text    string
		outcome string
	}{
		{"too long", nil, nil, long, "too_long"},
		{"the daily speech is spent", nil, []string{strings.Repeat("a", 150), strings.Repeat("b", 120)}, strings.Repeat("c", 60), "limited"},
		{"the share is spent", func(c *config) { c.speech.DailyUserSpeech = 0; c.cognition.DailyUserTokenBudget = 100 }, []string{strings.Repeat("a", 100)}, "hi", "limited"},
		{"the budget is spent", func(c *config) { c.cognition.DailyTokenBudget = 50 }, []string{strings.Repeat("a", 50)}, "hi", "limited"},
		{"nothing to say", nil, nil, "https://example.com", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := speechEnv(t, tc.cfg)
			for _, b := range tc.before {
				if _, err := e.s.Speak(context.Background(), speaker, b); err != nil {
					t.Fatal(err)
				}
			}
			before := len(e.srv.Speeches())
			if _, err := e.s.Speak(context.Background(), speaker, tc.text); !errors.Is(err, brain.ErrSpeechRefused) {
				t.Fatalf("Speak = %v, want ErrSpeechRefused", err)
			}
			if n := len(e.srv.Speeches()); n != before {
				t.Errorf("a refused reply reached the endpoint (%d requests, want %d)", n, before)
			}
			if tc.outcome != "" && metric(t, e, "anima_speech_requests_total", "outcome", tc.outcome) != 1 {
				t.Errorf("anima_speech_requests_total{outcome=%q} is not 1", tc.outcome)
			}
			// Another user still has all of theirs.
			if _, err := e.s.Speak(context.Background(), speaker+1, "hi"); err != nil && tc.name != "the budget is spent" {
				t.Errorf("another user: %v", err)
			}
		})
	}
}

// One failed answer fails only its reply: the next one is spoken — even an answer that
// says the endpoint cannot speak (404, an unknown model, audio that is not Ogg/Opus), which
// could be a proxy's error page; speech goes off only after several in a row
// (TestSpeechOffAfterRepeatedProof).
func TestSpeakFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  openaitest.Speaker
		outcome string
	}{
		{"server error", func(openaitest.Speech) ([]byte, int) { return nil, http.StatusInternalServerError }, "failed"},
		{"bad request", func(openaitest.Speech) ([]byte, int) { return []byte("input has a problem"), http.StatusBadRequest }, "failed"},
		{"no speech endpoint", func(openaitest.Speech) ([]byte, int) { return nil, http.StatusNotFound }, "unsupported"},
		{"unknown model", func(openaitest.Speech) ([]byte, int) {
			return []byte("The model `gpt-4o-mini-tts` does not exist"), http.StatusBadRequest
		}, "unsupported"},
		{"not Ogg/Opus", func(openaitest.Speech) ([]byte, int) { return []byte("ID3 an mp3"), 0 }, "unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := speechEnv(t, nil)
			e.srv.SetSpeaker(tc.answer)
			_, err := e.s.Speak(context.Background(), speaker, "hello there")
			if err == nil || errors.Is(err, brain.ErrSpeechRefused) || errors.Is(err, brain.ErrSpeechUnsupported) {
				t.Fatalf("Speak = %v; want a failure of this reply only", err)
			}
			if got := metric(t, e, "anima_speech_requests_total", "outcome", tc.outcome); got != 1 {
				t.Errorf("anima_speech_requests_total{outcome=%q} = %v, want 1", tc.outcome, got)
			}
			e.srv.SetSpeaker(nil)
			if _, err = e.s.Speak(context.Background(), speaker, "hello again"); err != nil {
				t.Fatalf("the next Speak = %v; want it spoken", err)
			}
			if len(e.srv.Speeches()) != 2 {
				t.Errorf("requests = %d, want 2", len(e.srv.Speeches()))
			}
			if got, want := e.cog.TokensToday(), len("hello again"); got != want {
				t.Errorf("tokens today = %d, want %d (the failed request uncharged)", got, want)
			}
		})
	}
}

// htmlPage is a proxy's error page answered with 200.
func htmlPage(openaitest.Speech) openaitest.SpeechStream {
	return openaitest.SpeechStream{ContentType: "text/html", Body: strings.NewReader("<html><body>502 Bad Gateway</body></html>")}
}

// A proxy's HTML page answered with 200 fails its reply alone; three answers in a row
// that say the endpoint cannot speak turn speech off for the process, and then no request
// is made.
func TestSpeechOffAfterRepeatedProof(t *testing.T) {
	t.Parallel()
	e := speechEnv(t, nil)
	ctx := context.Background()
	for round := range 2 { // two bad answers, then audio: the run starts again
		for i := range 2 {
			e.srv.SetSpeechStream(htmlPage)
			if _, err := e.s.Speak(ctx, speaker, "hello there"); err == nil || errors.Is(err, brain.ErrSpeechUnsupported) {
				t.Fatalf("round %d, bad answer %d: Speak = %v; want this reply's failure, speech still on", round, i, err)
			}
		}
		e.srv.SetSpeechStream(nil)
		if _, err := e.s.Speak(ctx, speaker, "hello"); err != nil {
			t.Fatalf("round %d: after two bad answers Speak = %v; want it spoken", round, err)
		}
	}
	e.srv.SetSpeaker(func(openaitest.Speech) ([]byte, int) { return nil, http.StatusNotFound })
	e.srv.SetSpeechStream(nil)
	for i := range 3 {
		if i == 2 {
			e.srv.SetSpeechStream(htmlPage) // the kinds of proof add up
		}
		_, err := e.s.Speak(ctx, speaker, "hello there")
		if off := errors.Is(err, brain.ErrSpeechUnsupported); err == nil || off != (i == 2) {
			t.Fatalf("bad answer %d in a row: Speak = %v; want speech off only at the third", i+1, err)
		}
	}
	if got := metric(t, e, "anima_speech_off"); got != 1 {
		t.Errorf("anima_speech_off = %v, want 1", got)
	}
	e.srv.SetSpeechStream(nil)
	e.srv.SetSpeaker(nil)
	before := len(e.srv.Speeches())
	if _, err := e.s.Speak(ctx, speaker, "hello"); !errors.Is(err, brain.ErrSpeechUnsupported) {
		t.Fatalf("Speak after speech went off = %v", err)
	}
	if n := len(e.srv.Speeches()); n != before {
		t.Errorf("speech off still asked the endpoint (%d requests, want %d)", n, before)
	}
	if got := metric(t, e, "anima_speech_requests_total", "outcome", "unsupported"); got != 7 {
		t.Errorf("unsupported answers = %v, want 7", got)
	}
}

// An endpoint that stops sending — after its headers, or in the middle of the audio —
// holds a reply for SpeechTimeout, not for the model's RequestTimeout: then it goes as
// text.
func TestSpeakStalled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		flow func(openaitest.Speech) openaitest.SpeechStream
	}{
		{"after the headers", openaitest.Stalled},
		{"in the audio", func(sp openaitest.Speech) openaitest.SpeechStream {
			audio := openaitest.Speak
			data, _ := audio(sp)
			return openaitest.SpeechStream{Body: strings.NewReader(string(data[:len(data)/2])), Stall: true}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := speechEnv(t, func(c *config) { c.cognition.RequestTimeout, c.speech.Timeout = time.Minute, 200*time.Millisecond })
			e.srv.SetSpeechStream(tc.flow)
			began := time.Now()
			_, err := e.s.Speak(context.Background(), speaker, "hello there, how was the walk?")
			if took := time.Since(began); took > 10*time.Second {
				t.Fatalf("a stalled answer held the reply %v; want about the speech timeout", took)
			}
			if err == nil || errors.Is(err, brain.ErrSpeechRefused) || errors.Is(err, brain.ErrSpeechUnsupported) {
				t.Fatalf("Speak = %v; want a failed request", err)
			}
			if got := metric(t, e, "anima_speech_requests_total", "outcome", "failed"); got != 1 {
				t.Errorf("failed requests = %v, want 1", got)
			}
		})
	}
}

// Three failed speech requests in a row open the speech breaker: replies then go as text
// at once, with no request, but for one probe every 30 s (the test's clock); a failed
// probe keeps it open, a spoken one closes it.
func TestSpeechBreaker(t *testing.T) {
	t.Parallel()
	e := speechEnv(t, nil)
	ctx := context.Background()
	failing := func(openaitest.Speech) ([]byte, int) { return nil, http.StatusBadGateway }
	e.srv.SetSpeaker(failing)
	for i := range 3 {
		if _, err := e.s.Speak(ctx, speaker, "hello there"); err == nil || errors.Is(err, brain.ErrSpeechUnsupported) {
			t.Fatalf("failure %d: Speak = %v", i+1, err)
		}
	}
	if got := metric(t, e, "anima_speech_breaker_open"); got != 1 {
		t.Fatalf("anima_speech_breaker_open = %v after three failures, want 1", got)
	}
	fastFail := func(when string) {
		t.Helper()
		before := len(e.srv.Speeches())
		if _, err := e.s.Speak(ctx, speaker, "hello there"); !errors.Is(err, brain.ErrSpeechUnsupported) {
			t.Fatalf("%s: Speak = %v; want it unavailable at once", when, err)
		}
		if n := len(e.srv.Speeches()); n != before {
			t.Fatalf("%s: the open breaker let a request through", when)
		}
	}
	fastFail("the breaker just opened")
	e.clock.Advance(29 * time.Second)
	fastFail("before the probe gap")
	e.clock.Advance(time.Second)
	if _, err := e.s.Speak(ctx, speaker, "hello there"); err == nil || errors.Is(err, brain.ErrSpeechUnsupported) {
		t.Fatalf("the failing probe: Speak = %v; want the request's failure", err)
	}
	fastFail("after a failed probe")
	e.srv.SetSpeaker(nil)
	e.clock.Advance(30 * time.Second)
	if _, err := e.s.Speak(ctx, speaker, "hello there"); err != nil {
		t.Fatalf("the probe: Speak = %v; want it spoken", err)
	}
	if got := metric(t, e, "anima_speech_breaker_open"); got != 0 {
		t.Errorf("anima_speech_breaker_open = %v after the probe, want 0", got)
	}
	if _, err := e.s.Speak(ctx, speaker, "hello"); err != nil {
		t.Fatalf("after the probe: Speak = %v", err)
	}
	if got := metric(t, e, "anima_speech_requests_total", "outcome", "unavailable"); got != 3 {
		t.Errorf("unavailable = %v, want 3", got)
	}
	if got := len(e.srv.Speeches()); got != 6 {
		t.Errorf("requests = %d, want 6 (three failures, two probes, one reply)", got)
	}
}

// An answer far longer than the reply can be (500 MB) is refused without holding it: the
// read stops at the reply's cap, and a declared length past it is refused before
// reading. Not parallel: it counts the process's allocations.
func TestSpeakOversize(t *testing.T) {
	for _, declared := range []bool{false, true} {
		e := speechEnv(t, nil)
		e.srv.SetSpeechStream(openaitest.Oversize(500<<20, declared))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := e.s.Speak(context.Background(), speaker, spokenReply)
		runtime.ReadMemStats(&after)
		if err == nil || errors.Is(err, brain.ErrSpeechUnsupported) || errors.Is(err, brain.ErrSpeechRefused) {
			t.Fatalf("declared %v: Speak = %v; want a failed request", declared, err)
		}
		// The cap of a 200-character reply (13 s) is about 480 KB: its buffer, grown by
		// doubling, takes less than 1 MB; the transport and the server take a little more.
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("declared %v: %d bytes allocated", declared, got)
		if got > 4<<20 {
			t.Errorf("declared %v: Speak allocated %d bytes for an answer over its cap; want under 4 MiB", declared, got)
		}
	}
}

// spokenReply is a reply of 200 characters: about 13 s of speech.
var spokenReply = strings.Repeat("It sounds like a lovely day. ", 7)[:200]

// BenchmarkSpeak is one spoken reply through the real go-openai client and the fake
// endpoint over HTTP: Sayable, the request, the Ogg/Opus read and its length parsed.
func BenchmarkSpeak(b *testing.B) {
	e := speechEnv(b, func(c *config) { c.speech.DailyUserSpeech, c.cognition.DailyUserTokenBudget = 0, 0 })
	var v brain.Voice
	for b.Loop() {
		var err error
		if v, err = e.s.Speak(context.Background(), speaker, spokenReply); err != nil {
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
			got := speech.Sayable(tc.in)
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
		got := speech.Sayable(s)
		if strings.Contains(got, "**") || strings.Contains(got, "`") {
			t.Fatalf("Sayable(%q) = %q", s, got)
		}
	})
}

// A person's daily speech rolls over at midnight in Zone, not UTC's: spent by a
// Tokyo evening, it is whole again after Tokyo's midnight. A saved day other than
// today is not restored.
func TestDailySpeechRollsOver(t *testing.T) {
	t.Parallel()
	tokyo := braintest.Zone(t, "Asia/Tokyo")
	e := speechEnv(t, func(c *config) { c.speech.Zone, c.cognition.DailyUserTokenBudget = tokyo, 0 })
	e.clock.Set(time.Date(2025, 3, 14, 23, 0, 0, 0, tokyo))
	long := strings.Repeat("a", 240) // 16 s of the 20 s
	if _, err := e.s.Speak(context.Background(), speaker, long); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Speak(context.Background(), speaker, long); !errors.Is(err, brain.ErrSpeechRefused) {
		t.Fatalf("past the daily speech: Speak = %v, want ErrSpeechRefused", err)
	}
	day, millis := e.s.UserSpeech()
	e.clock.Advance(time.Hour) // 00:00 in Tokyo, 15:00 in UTC
	if got := e.s.SpeechToday(speaker); got != 0 {
		t.Fatalf("speech today after midnight = %v, want 0", got)
	}
	e.s.RestoreUserSpeech(day, millis) // yesterday's
	if _, err := e.s.Speak(context.Background(), speaker, long); err != nil {
		t.Fatalf("the next day: Speak = %v; want it spoken", err)
	}
}
