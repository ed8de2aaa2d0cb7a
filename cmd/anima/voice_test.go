package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

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
