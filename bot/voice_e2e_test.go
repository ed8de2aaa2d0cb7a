package bot_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/speech"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// speakingHarness is the e2e harness with a speech model (voice.reply auto: mirror).
func speakingHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	h.cfg.LLM.SpeechModel = "gpt-4o-mini-tts"
	h.cfg.Voice.Name = "coral"
	return h
}

// waitVoices waits for n voice notes sent to the user.
func waitVoices(t *testing.T, tg *telegramtest.Server, n int) []telegramtest.Voice {
	t.Helper()
	if err := tg.WaitFor(waitCtx(t), func() bool { return len(tg.Voices()) >= n }); err != nil {
		t.Fatalf("%d voice notes, want %d: %v", len(tg.Voices()), n, err)
	}
	return tg.Voices()
}

// spent is what anima asked of the fake servers in all: text messages and voice notes
// sent, files downloaded, recordings transcribed and speech made.
type spent struct{ texts, voices, downloads, transcriptions, speeches int }

// stopSpent stops anima (stop, from h.start) and returns what it asked of the fakes in all:
// nothing more came after what the test waited for.
func (h *harness) stopSpent(stop func()) spent {
	h.t.Helper()
	stop()
	return spent{len(h.tg.Sent()), len(h.tg.Voices()), len(h.tg.Downloads()), len(h.ai.Transcriptions()), len(h.ai.Speeches())}
}

// A voice note in, a voice note out: the echo of the transcript spoken through
// /v1/audio/speech as Ogg/Opus, sent with sendVoice, its duration from the Ogg pages and
// the text as the caption (no text message besides); a text in, a text out (mirror);
// /status details tells the speech made today.
func TestVoiceNoteAnsweredWithVoice(t *testing.T) {
	t.Parallel()
	h := speakingHarness(t)
	addrs, stop := h.start()
	h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("how are **you** today"), 4))
	v := waitVoices(t, h.tg, 1)[0]
	want := "echo: [voice 0:04] how are you today"
	if v.Visible != want || v.ReplyTo == 0 {
		t.Errorf("voice note caption %q (reply to %d), want %q", v.Visible, v.ReplyTo, want)
	}
	sp := h.ai.Speeches()
	if len(sp) != 1 || sp[0].Input != speech.Sayable(want) || sp[0].Format != "opus" || sp[0].Voice != "coral" {
		t.Fatalf("speech requests = %+v", sp)
	}
	if secs := (v.Length + time.Second - 1) / time.Second; v.Duration != int(secs) || v.Length <= 0 {
		t.Errorf("duration %d s for a %v recording", v.Duration, v.Length)
	}
	sent := h.say("and in writing?")
	if sent[0].Visible != "echo: and in writing?" {
		t.Errorf("text answered with %q", sent[0].Visible)
	}
	sent = h.sayUntil("/status details", 2)
	if !strings.Contains(sent[1].Visible, "Spoken for you today: 0:02 of 10:00") {
		t.Errorf("/status details = %q, want the speech made today", sent[1].Visible)
	}
	if got := metricSample(t, addrs.Metrics, `anima_speech_requests_total{outcome="ok"}`); got != 1 {
		t.Errorf("speech requests ok = %v, want 1", got)
	}
	if got := metricSample(t, addrs.Metrics, `anima_speech_bytes_total`); got != float64(len(v.Audio)) {
		t.Errorf("anima_speech_bytes_total = %v, want %d", got, len(v.Audio))
	}
	if got, want := h.stopSpent(stop), (spent{texts: 2, voices: 1, downloads: 1, transcriptions: 1, speeches: 1}); got != want {
		t.Errorf("in all %+v, want %+v", got, want)
	}
}

// limits.speech_per_user_per_day: past it the reply goes as text, counted as a refusal;
// /voice off keeps a person's replies in writing, /voice on speaks even to text.
func TestSpeechCapAndChoice(t *testing.T) {
	t.Parallel()
	h := speakingHarness(t)
	h.cfg.Limits.SpeechPerUserPerDay = config.Duration(3 * time.Second) // one short reply
	addrs, stop := h.start()
	h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("first one"), 2))
	waitVoices(t, h.tg, 1)
	h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("second one"), 2))
	sent := h.waitSent(1, "anima's messages")
	if sent[0].Visible != "echo: [voice 0:02] second one" {
		t.Errorf("past the cap: %q, want the reply in writing", sent[0].Visible)
	}
	if got := metricSample(t, addrs.Metrics, `anima_limits_refused_total{limit="user_speech"}`); got != 1 {
		t.Errorf("user_speech refusals = %v, want 1", got)
	}
	// One speech request: a refused reply is not sent to the endpoint.
	if got, want := h.stopSpent(stop), (spent{texts: 1, voices: 1, downloads: 2, transcriptions: 2, speeches: 1}); got != want {
		t.Errorf("in all %+v, want %+v", got, want)
	}
}

// /voice off, then a voice note: text; /voice on, then a text: a voice note.
func TestVoiceCommand(t *testing.T) {
	t.Parallel()
	h := speakingHarness(t)
	_, stop := h.start()
	h.say("/voice off")
	h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("hello"), 1))
	sent := h.waitSent(2, "anima's messages")
	if !strings.Contains(sent[0].Visible, "in writing") || sent[1].Visible != "echo: [voice 0:01] hello" {
		t.Fatalf("sent %q, %q", sent[0].Visible, sent[1].Visible)
	}
	h.sayUntil("/voice on", 3)
	h.tg.PushText(user, user, "speak to me")
	if v := waitVoices(t, h.tg, 1); v[0].Visible != "echo: speak to me" {
		t.Errorf("voice note %q", v[0].Visible)
	}
	if got, want := h.stopSpent(stop), (spent{texts: 3, voices: 1, downloads: 1, transcriptions: 1, speeches: 1}); got != want {
		t.Errorf("in all %+v, want %+v", got, want)
	}
}

// A speech failure sends the text instead, for that reply alone. Three in a row are
// proof: server errors open the speech breaker, and the fourth reply goes as text without
// asking (its probe is 30 s away); an endpoint without speech (404) three times turns
// speech off until restart.
func TestSpeechFallsBackToText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		outcomes map[string]float64 // anima_speech_requests_total for four voice notes
	}{
		{"server error", http.StatusInternalServerError, map[string]float64{"failed": 3, "unavailable": 1}}, // not retried: the text goes at once
		{"no speech endpoint", http.StatusNotFound, map[string]float64{"unsupported": 3, "unavailable": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := speakingHarness(t)
			h.ai.SetSpeaker(func(openaitest.Speech) ([]byte, int) { return nil, tc.status })
			addrs, stop := h.start()
			notes := []string{"one", "two", "three", "four"}
			for i, words := range notes {
				h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte(words), 1))
				sent := h.waitSent(i+1, "anima's messages")
				if want := "echo: [voice 0:01] " + words; sent[i].Visible != want {
					t.Errorf("answer %d = %q, want %q", i, sent[i].Visible, want)
				}
			}
			for outcome, want := range tc.outcomes {
				if got := metricSample(t, addrs.Metrics, `anima_speech_requests_total{outcome="`+outcome+`"}`); got != want {
					t.Errorf("anima_speech_requests_total{outcome=%q} = %v, want %v", outcome, got, want)
				}
			}
			// The 4 texts alone, after 3 speech requests.
			if got, want := h.stopSpent(stop), (spent{texts: 4, downloads: 4, transcriptions: 4, speeches: 3}); got != want {
				t.Errorf("in all %+v, want %+v", got, want)
			}
		})
	}
}

// waitMetric polls /metrics on addr until it holds line, or fails the test when ctx ends.
func waitMetric(ctx context.Context, t *testing.T, addr, line string) {
	t.Helper()
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if strings.Contains(string(b), line) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/metrics never showed %s", line)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestVoiceNotesAfterUserShare is issue 16's reproduction: once a user's daily token
// share is spent, six 10-minute voice notes are neither downloaded nor transcribed, and
// get the share's one notice, as a text would.
func TestVoiceNotesAfterUserShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.LLM.DailyUserTokenBudget = 1 // spent by the first answer
	addrs, stop := h.start()
	h.say("hello")
	for range 6 {
		h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("a long story"), 600))
	}
	ctx := waitCtx(t)
	waitMetric(ctx, t, addrs.Metrics, `anima_media_total{kind="voice",outcome="limited"} 6`)
	sent, err := h.tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent[1].Visible, "daily share") {
		t.Errorf("the answer to the voice notes = %q, want the share's notice", sent[1].Visible)
	}
	// The answer, then one notice; nothing downloaded or transcribed after the share.
	if got, want := h.stopSpent(stop), (spent{texts: 2}); got != want {
		t.Errorf("in all %+v, want %+v", got, want)
	}
}

// TestVoiceNotesPastDailyAudio: limits.audio_per_user_per_day is checked by a voice
// note's duration before its download: a 10-minute note is heard, a second one (20
// minutes in all, past 15) is not downloaded and gets a notice.
func TestVoiceNotesPastDailyAudio(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.Limits.AudioPerUserPerDay = config.Duration(15 * time.Minute)
	addrs, stop := h.start()
	h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("first story"), 600))
	ctx := waitCtx(t)
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "echo: [voice 10:00] first story"; sent[0].Visible != want {
		t.Errorf("answer = %q, want %q", sent[0].Visible, want)
	}
	h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte("second story"), 600))
	if sent, err = h.tg.WaitSent(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent[1].Visible, "could you type it for me?") {
		t.Errorf("the answer to the second note = %q, want the daily audio notice", sent[1].Visible)
	}
	waitMetric(ctx, t, addrs.Metrics, `anima_limits_refused_total{limit="user_audio"} 1`)
	// Only the first note downloaded and transcribed.
	if got, want := h.stopSpent(stop), (spent{texts: 2, downloads: 1, transcriptions: 1}); got != want {
		t.Errorf("in all %+v, want %+v", got, want)
	}
}
