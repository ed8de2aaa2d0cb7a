package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestVoiceNoteIsTranscribedAndAnswered: a voice note is downloaded (getFile, then the
// file path with the token), transcribed on the model endpoint, and answered from its
// words; the transcript is the user's message, marked as voice.
func TestVoiceNoteIsTranscribedAndAnswered(t *testing.T) {
	t.Parallel()
	tg, ai, a := startWithToken(t, "log:\n  level: debug\n")

	tg.PushMessage(tg.VoiceMessage(user, user, []byte("please remind me to water the ferns"), 42))
	ctx := waitCtx(t, 30*time.Second)
	if got, want := firstSent(ctx, t, tg), "echo: [voice 0:42] please remind me to water the ferns"; got != want {
		t.Errorf("answer = %q, want %q (answered from the transcript)", got, want)
	}
	tr := ai.Transcriptions()
	if len(tr) != 1 || tr[0].Model != "whisper-1" || tr[0].FileName != "voice.ogg" {
		t.Errorf("transcriptions = %+v, want one whisper-1 request for voice.ogg", tr)
	}
	if d := tg.Downloads(); len(d) != 1 || d[0].Status != http.StatusOK {
		t.Errorf("downloads = %+v, want one that succeeded", d)
	}
	body := metricsBody(t, a.metrics)
	for _, want := range []string{
		`anima_llm_requests_total{model="whisper-1",outcome="ok"} 1`,
		`anima_media_total{kind="voice",outcome="ok"} 1`,
		`anima_media_audio_seconds_total 42`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	stopClean(t, ai, a)
}

// TestPhotoReachesTheModelAsDataURL: a photo reaches the model as a base64 data: image
// part of the size that fits 1280 px, with its caption; the token appears in no request
// to the model endpoint, and the next turn's prompt holds the note, not the image.
func TestPhotoReachesTheModelAsDataURL(t *testing.T) {
	t.Parallel()
	tg, ai, a := startWithToken(t, "log:\n  level: debug\n")

	small, fit, big := []byte("\xff\xd8small-jpeg"), []byte("\xff\xd8fitting-jpeg"), []byte("\xff\xd8huge-jpeg")
	tg.PushMessage(tg.PhotoMessage(user, user, "my new kitchen!",
		telegramtest.Image{Width: 320, Height: 240, Data: small},
		telegramtest.Image{Width: 1280, Height: 960, Data: fit},
		telegramtest.Image{Width: 2560, Height: 1920, Data: big}))
	ctx := waitCtx(t, 30*time.Second)
	if got, want := firstSent(ctx, t, tg), "echo: [photo] my new kitchen!"; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
	reqs := ai.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	want := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(fit)
	if urls := reqs[0].ImageURLs(); len(urls) != 1 || urls[0] != want {
		t.Errorf("image parts = %.80q, want one data: URL of the 1280 px size", urls)
	}
	if got := reqs[0].UserText(); got != "[photo] my new kitchen!" {
		t.Errorf("user text = %q, want the caption with the photo note", got)
	}

	// The next turn remembers that a photo was shown, without the image.
	say(ctx, t, tg, "what did I just show you?", 2)
	reqs = ai.Requests()
	last := reqs[len(reqs)-1]
	if urls := last.ImageURLs(); len(urls) != 0 {
		t.Errorf("the image is in the next turn's prompt too")
	}
	if !bytes.Contains(last.Raw, []byte("[photo] my new kitchen!")) {
		t.Errorf("the next turn's prompt lacks the photo note from history")
	}
	stopClean(t, ai, a)
}

// TestLargeFileGetsTheShortRefusal: a 300 KB text file is not downloaded nor shown to
// the model; the user gets the short refusal, and the message is recorded.
func TestLargeFileGetsTheShortRefusal(t *testing.T) {
	t.Parallel()
	tg, ai, a := startWithToken(t, "")

	data := bytes.Repeat([]byte("a line of notes\n"), 300<<10/16)
	id := tg.PushMessage(tg.DocumentMessage(user, user, "notes.txt", "text/plain", data, ""))
	ctx := waitCtx(t, 30*time.Second)
	if got, want := firstSent(ctx, t, tg), "That file is too big for me: I can read text files (.txt, .md, .csv, .json) up to 256 KB."; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
	if err := tg.WaitPollOffset(ctx, id+1); err != nil {
		t.Fatalf("the update was never confirmed: %v", err)
	}
	if n := len(ai.Requests()); n != 0 {
		t.Errorf("%d model requests for a refused file", n)
	}
	if d := tg.Downloads(); len(d) != 0 {
		t.Errorf("the file was downloaded: %+v", d)
	}
	if !strings.Contains(metricsBody(t, a.metrics), `anima_media_total{kind="document",outcome="refused"} 1`) {
		t.Error("/metrics lacks the refused document")
	}
}

// stopClean stops anima and checks that the model endpoint saw only valid requests and
// that neither half of the token reached it nor the log.
func stopClean(t *testing.T, ai *openaitest.Server, a *running) {
	t.Helper()
	if v := ai.Violations(); len(v) > 0 {
		t.Errorf("the model endpoint saw invalid requests: %v", v)
	}
	a.stop()
	secretHalf := validToken[strings.IndexByte(validToken, ':')+1:]
	for _, leaked := range []string{validToken, secretHalf} {
		if ai.Contains(leaked) {
			t.Errorf("the token reached the model endpoint")
		}
		if strings.Contains(a.stderr.String(), leaked) {
			t.Errorf("the token is in the log")
		}
	}
	if !ai.Contains("Bearer test") {
		t.Error("the model endpoint recorded no request headers: the token check proves nothing")
	}
}

func metricsBody(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestKillBetweenSpeechAndDeliveryDeliversOnce kills anima with SIGKILL after a reply to a
// voice note was spoken and committed — the audio kept in the store beside its outbox
// entry — while sendVoice is in flight; after a restart the voice note arrives exactly
// once, with the same audio, from the outbox: the model is not asked again and the reply
// is not spoken again.
func TestKillBetweenSpeechAndDeliveryDeliversOnce(t *testing.T) {
	t.Parallel()
	tg, ai, path := fakeService(t)
	ai.SetSpeaker(func(s openaitest.Speech) ([]byte, int) {
		time.Sleep(300 * time.Millisecond) // a speech model takes a moment: Telegram is made to hang meanwhile
		return openaitest.Speak(s)
	})
	editConfig(t, path, "llm:\n", "llm:\n  speech_model: gpt-4o-mini-tts\n")

	p := start(t, "run", "--config", path)
	tg.PushMessage(tg.VoiceMessage(user, user, []byte("tell me a story"), 3))
	ctx := waitCtx(t, 30*time.Second)
	if err := waitFor(ctx, func() bool { return len(ai.Speeches()) > 0 }); err != nil {
		t.Fatal("the reply was never spoken")
	}
	tg.SetLatency(time.Minute) // Telegram stops answering: sendVoice hangs
	time.Sleep(time.Second)    // the audio arrives, is committed with the outbox entry, and is being sent
	p.kill(t)
	tg.SetLatency(0)
	if n := len(tg.Voices()); n != 0 {
		t.Fatalf("%d voice notes before the restart: the kill came too late to test anything", n)
	}

	p = start(t, "run", "--config", path)
	if err := tg.WaitFor(ctx, func() bool { return len(tg.Voices()) > 0 }); err != nil {
		t.Fatalf("no voice note after restart: %v", err)
	}
	time.Sleep(time.Second) // a duplicate would come now
	p.stop(t)
	voices := tg.Voices()
	want := "echo: [voice 0:03] tell me a story"
	if len(voices) != 1 || voices[0].Visible != want {
		t.Fatalf("voice notes = %d (first caption %q), want exactly 1 with %q", len(voices), firstCaption(voices), want)
	}
	spoken, _ := openaitest.Speak(ai.Speeches()[0])
	if !bytes.Equal(voices[0].Audio, spoken) || voices[0].Duration != 3 {
		t.Errorf("the delivered note (%d bytes, %d s) is not the audio spoken before the kill (%d bytes)", len(voices[0].Audio), voices[0].Duration, len(spoken))
	}
	if n := len(ai.Speeches()); n != 1 {
		t.Errorf("%d speech requests, want 1: the audio comes from the store", n)
	}
	if n := len(ai.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: the reply comes from the outbox, not a new turn", n)
	}
	if n := len(tg.Sent()); n != 0 {
		t.Errorf("%d text messages besides the voice note", n)
	}
	if !strings.Contains(p.stderr.String(), "undelivered=1") {
		t.Errorf("the restart did not resume from the outbox:\n%s", p.stderr.String())
	}
}

// waitFor polls cond every 10 ms until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

func firstCaption(v []telegramtest.Voice) string {
	if len(v) == 0 {
		return ""
	}
	return v[0].Visible
}
