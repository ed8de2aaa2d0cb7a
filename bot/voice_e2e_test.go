package bot_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
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
	if len(sp) != 1 || sp[0].Input != cognition.Sayable(want) || sp[0].Format != "opus" || sp[0].Voice != "coral" {
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
	stop()
	if n := len(h.tg.Voices()); n != 1 {
		t.Errorf("%d voice notes, want 1", n)
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
	if n := len(h.ai.Speeches()); n != 1 {
		t.Errorf("%d speech requests, want 1: a refused reply is not sent to the endpoint", n)
	}
	stop()
	if n := len(h.tg.Voices()); n != 1 {
		t.Errorf("%d voice notes, want 1", n)
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
	stop()
	if n := len(h.ai.Speeches()); n != 1 {
		t.Errorf("%d speech requests, want 1", n)
	}
}

// A speech failure sends the text instead, once; an endpoint without speech (404) also
// turns speech off until restart: the next voice note is answered in writing without
// asking again.
func TestSpeechFallsBackToText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		requests int // speech requests for two voice notes
	}{
		{"server error", http.StatusInternalServerError, 2}, // not retried: the text goes at once
		{"no speech endpoint", http.StatusNotFound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := speakingHarness(t)
			h.ai.SetSpeaker(func(openaitest.Speech) ([]byte, int) { return nil, tc.status })
			addrs, stop := h.start()
			for i, words := range []string{"one", "two"} {
				h.tg.PushMessage(h.tg.VoiceMessage(user, user, []byte(words), 1))
				sent := h.waitSent(i+1, "anima's messages")
				if want := "echo: [voice 0:01] " + words; sent[i].Visible != want {
					t.Errorf("answer %d = %q, want %q", i, sent[i].Visible, want)
				}
			}
			outcome := map[int]string{http.StatusInternalServerError: "failed", http.StatusNotFound: "unsupported"}[tc.status]
			if got := metricSample(t, addrs.Metrics, `anima_speech_requests_total{outcome="`+outcome+`"}`); got != float64(tc.requests) {
				t.Errorf("anima_speech_requests_total{outcome=%q} = %v, want %d", outcome, got, tc.requests)
			}
			stop()
			if n := len(h.tg.Sent()); n != 2 || len(h.tg.Voices()) != 0 {
				t.Errorf("%d texts and %d voice notes, want the 2 texts alone", n, len(h.tg.Voices()))
			}
			if n := len(h.ai.Speeches()); n != tc.requests {
				t.Errorf("%d speech requests, want %d", n, tc.requests)
			}
		})
	}
}
