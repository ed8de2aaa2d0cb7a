package telegram

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/ogg"
	"github.com/anima-bot/anima/channels/channelstest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

func spokenMsg(text string) brain.SendMessage {
	audio := ogg.Silence(2300 * time.Millisecond)
	return brain.SendMessage{Chat: alice, Text: text, ReplyTo: 77,
		Voice: &brain.Voice{Audio: audio, Duration: 2300 * time.Millisecond, Bytes: len(audio)}}
}

// A spoken reply is a voice note (sendVoice: the Ogg/Opus uploaded as multipart, its
// duration rounded up) with the text as its caption when it fits, else followed by the
// text; it answers the message the text would have answered.
func TestSendVoice(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("All of this. ", 90) // 1,170 characters: over a caption
	for _, tc := range []struct {
		name     string
		msg      brain.SendMessage
		caption  string
		texts    int
		buttonOn string // "voice" or "text"
	}{
		{"caption", spokenMsg("That's **lovely** to hear."), "That's lovely to hear.", 0, "voice"},
		{"too long for a caption", spokenMsg(long), "", 1, "text"},
		{"a plain caption", func() brain.SendMessage { m := spokenMsg("a *b*"); m.Plain = true; return m }(), "a *b*", 0, "voice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 0, nil)
			tc.msg.Buttons = [][]brain.Button{{{Text: "Yes", Data: "/x"}}}
			if err := h.ch.Send(testCtx(t), tc.msg); err != nil {
				t.Fatal(err)
			}
			voices := h.srv.VoicesTo(alice)
			if len(voices) != 1 {
				t.Fatalf("voice notes = %d, want 1", len(voices))
			}
			v := voices[0]
			if !bytes.Equal(v.Audio, tc.msg.Voice.Audio) || v.Duration != 3 || v.Length != 2300*time.Millisecond || v.ReplyTo != 77 || !strings.HasSuffix(v.FileName, ".ogg") {
				t.Errorf("voice note: %d bytes, duration %d, length %v, reply to %d, file %q", len(v.Audio), v.Duration, v.Length, v.ReplyTo, v.FileName)
			}
			if v.Visible != tc.caption {
				t.Errorf("caption = %q, want %q", v.Visible, tc.caption)
			}
			texts := h.srv.SentTo(alice)
			if len(texts) != tc.texts {
				t.Fatalf("text messages = %d, want %d", len(texts), tc.texts)
			}
			if tc.texts > 0 && (texts[0].Visible != strings.TrimSpace(long) || texts[0].ReplyTo != 0 || texts[0].ID < v.ID) {
				t.Errorf("text after the note: %+v", texts[0])
			}
			onVoice := len(v.ReplyMarkup) > 0
			if onVoice != (tc.buttonOn == "voice") || tc.texts > 0 && len(texts[0].ReplyMarkup) == 0 {
				t.Errorf("buttons on the wrong message (want on the %s)", tc.buttonOn)
			}
		})
	}
}

// A voice note Telegram refuses for good (the person allows no voice messages) goes as
// text, once; a text that fails after its note went out reports the note as delivered, so
// the retry sends the text alone.
func TestSendVoiceFallbacks(t *testing.T) {
	t.Parallel()
	t.Run("voice refused", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 0, nil)
		h.srv.InjectFault("sendVoice", telegramtest.Fault{Code: 400, Description: "Bad Request: VOICE_MESSAGES_FORBIDDEN"})
		if err := h.ch.Send(testCtx(t), spokenMsg("hello")); err != nil {
			t.Fatal(err)
		}
		if v, s := h.srv.Voices(), h.srv.SentTo(alice); len(v) != 0 || len(s) != 1 || s[0].Visible != "hello" || s[0].ReplyTo != 77 {
			t.Fatalf("voices %d, texts %+v; want the text alone", len(v), s)
		}
	})
	// A text part that fails after earlier parts went out: the error counts every part
	// delivered so far, this try's and the earlier tries' (SkipParts), and the retry
	// sends only the rest.
	chatNotFound := telegramtest.Fault{Code: 400, Description: "Bad Request: chat not found"}
	for _, tc := range []struct {
		name        string
		words, skip int                  // the reply's length in words; the parts an earlier try delivered
		faults      []telegramtest.Fault // sendMessage's, in order
		sent        int                  // PartialSendError.Sent
		voices      int                  // notes sent in all
		texts       int                  // text messages sent in all
	}{
		{"text after the note fails", 300, 0, []telegramtest.Fault{chatNotFound}, 1, 1, 1},
		// the note, then 4 text parts: the note and text part 1 went out before; part 2
		// goes, part 3 fails; the retry sends parts 3 and 4: no note, parts 2 to 4 once each
		{"a retry that fails later counts every part before", 2500, 2, []telegramtest.Fault{{Pass: true}, chatNotFound}, 3, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 0, nil)
			m := spokenMsg(strings.Repeat("word ", tc.words))
			m.SkipParts = tc.skip
			for _, f := range tc.faults {
				h.srv.InjectFault("sendMessage", f)
			}
			err := h.ch.Send(testCtx(t), m)
			var partial *brain.PartialSendError
			if !errors.As(err, &partial) || partial.Sent != tc.sent {
				t.Fatalf("Send = %v; want a PartialSendError counting %d parts", err, tc.sent)
			}
			m.SkipParts = partial.Sent
			if err := h.ch.Send(testCtx(t), m); err != nil {
				t.Fatal(err)
			}
			if v, s := h.srv.Voices(), h.srv.SentTo(alice); len(v) != tc.voices || len(s) != tc.texts {
				t.Fatalf("voices %d, texts %d; want %d and %d", len(v), len(s), tc.voices, tc.texts)
			}
		})
	}
	t.Run("no audio", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, 0, nil)
		m := spokenMsg("revived")
		m.Voice.Audio = nil
		if err := h.ch.Send(testCtx(t), m); err != nil {
			t.Fatal(err)
		}
		if v, s := h.srv.Voices(), h.srv.SentTo(alice); len(v) != 0 || len(s) != 1 {
			t.Fatalf("voices %d, texts %d; want the text", len(v), len(s))
		}
	})
}

// The fake refuses what Telegram would not play as a voice note.
func TestFakeRefusesInvalidVoice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, nil)
	m := spokenMsg("hi")
	m.Voice.Audio = []byte("ID3 not an ogg")
	err := h.ch.Send(testCtx(t), m)
	if s := h.srv.SentTo(alice); err != nil || len(s) != 1 {
		t.Fatalf("Send = %v, texts %d: a refused note goes as text", err, len(s))
	}
	calls := h.srv.CallsTo("sendVoice")
	if len(calls) != 1 || calls[0].Status != 400 || calls[0].Params["voice"] != "attach://voice" {
		t.Fatalf("sendVoice calls = %+v", calls)
	}
}

// BenchmarkSendVoice is one voice note (13 s of the fakes' Ogg/Opus, a 200-character
// caption) through the real go-telegram/bot client to the fake Bot API: the multipart
// upload and its answer.
func BenchmarkSendVoice(b *testing.B) {
	srv := telegramtest.New(b)
	ch, err := New(Config{Token: srv.Token, APIURL: srv.URL, AllowedUsers: []int64{alice}, PollTimeout: time.Second},
		channelstest.NewRecorder(0), newSink(), Options{Registerer: prometheus.NewRegistry(), PerChatInterval: time.Nanosecond, GlobalRate: 1e9})
	if err != nil {
		b.Fatal(err)
	}
	audio := ogg.Silence(13 * time.Second)
	m := brain.SendMessage{Chat: alice, Text: strings.Repeat("It sounds like a lovely day. ", 7)[:200],
		Voice: &brain.Voice{Audio: audio, Duration: 13 * time.Second, Bytes: len(audio)}}
	for b.Loop() {
		if err := ch.Send(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(audio)), "audio_bytes")
}
