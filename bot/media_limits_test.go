package bot_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot/config"
)

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
	stop()
	if n := len(h.tg.Sent()); n != 2 {
		t.Errorf("%d messages sent, want 2 (the answer, then one notice)", n)
	}
	if d := h.tg.Downloads(); len(d) != 0 {
		t.Errorf("downloads after the share: %+v", d)
	}
	if tr := h.ai.Transcriptions(); len(tr) != 0 {
		t.Errorf("%d transcriptions after the share", len(tr))
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
	stop()
	if d := h.tg.Downloads(); len(d) != 1 {
		t.Errorf("downloads = %+v, want only the first note's", d)
	}
	if tr := h.ai.Transcriptions(); len(tr) != 1 {
		t.Errorf("%d transcriptions, want 1", len(tr))
	}
}
