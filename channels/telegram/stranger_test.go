package telegram

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain/braintest"
)

// TestStrangerLoggedOncePerHour: a message from anyone not allowed got no reply and left
// no trace in the log, even at debug level, so a new owner could not learn their own id
// (issue 20). Each stranger is now logged at WARN with user and chat id and name, once an
// hour, and counted as unauthorized.
func TestStrangerLoggedOncePerHour(t *testing.T) {
	t.Parallel()
	clock := braintest.NewClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	var logs braintest.Buffer
	h := newHarness(t, 0, func(_ *Config, o *Options) {
		o.Now = clock.Now
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	h.srv.PushText(bob, bob, "hello?")
	h.srv.PushText(bob, bob, "anyone there?")
	h.srv.PushReaction(bob, bob, 1, "👍")
	last := h.srv.PushText(alice, alice, "hi")
	h.start(t)
	h.rec.WaitOffset(t, last+1)

	warned := func() int { return strings.Count(logs.String(), "stranger ignored") }
	if n := warned(); n != 1 {
		t.Fatalf("%d stranger warnings for three updates within the hour, want 1:\n%s", n, logs.String())
	}
	for _, want := range []string{"level=WARN", "user_id=2002", "chat_id=2002", "first_name="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("warning lacks %q:\n%s", want, logs.String())
		}
	}
	clock.Advance(59 * time.Minute)
	last = h.srv.PushText(bob, bob, "still nothing")
	h.rec.WaitOffset(t, last+1)
	if n := warned(); n != 1 {
		t.Errorf("%d warnings 59 minutes on, want still 1", n)
	}
	clock.Advance(time.Minute)
	last = h.srv.PushText(bob, bob, "an hour later")
	h.rec.WaitOffset(t, last+1)
	if n := warned(); n != 2 {
		t.Errorf("%d warnings an hour on, want 2:\n%s", n, logs.String())
	}
	if got := testutil.ToFloat64(h.ch.met.updates.WithLabelValues(kindUnauthorized)); got != 5 {
		t.Errorf("unauthorized updates = %v, want 5", got)
	}
}

func TestStrangersBounded(t *testing.T) {
	t.Parallel()
	s := newStrangers()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for u := range int64(maxStrangers) {
		if !s.due(u, now) {
			t.Fatalf("stranger %d not due", u)
		}
	}
	if s.due(maxStrangers+1, now.Add(time.Minute)) {
		t.Error("a new stranger was remembered past the bound within the hour")
	}
	if !s.due(maxStrangers+1, now.Add(time.Hour)) || len(s.last) != 1 {
		t.Errorf("after an hour the old entries should go: %d remembered", len(s.last))
	}
}

// TestStrangersExpireInOrder: each sender goes an hour after they were noted, the oldest
// first, while the others stay; the queue holds exactly the users remembered.
func TestStrangersExpireInOrder(t *testing.T) {
	t.Parallel()
	s := newStrangers()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		user int64
		at   time.Duration
		due  bool
		kept int
	}{
		{1, 0, true, 1},
		{2, 20 * time.Minute, true, 2},
		{3, 40 * time.Minute, true, 3},
		{2, 59 * time.Minute, false, 3},
		{1, 60 * time.Minute, true, 3}, // 1 went and came back
		{2, 80 * time.Minute, true, 3}, // so did 2
		{3, 99 * time.Minute, false, 3},
		{4, 3 * time.Hour, true, 1}, // everyone else went
	}
	for _, st := range steps {
		if got := s.due(st.user, t0.Add(st.at)); got != st.due {
			t.Errorf("at %v user %d: due %v, want %v", st.at, st.user, got, st.due)
		}
		if len(s.last) != st.kept || len(s.order)-s.head != st.kept {
			t.Errorf("at %v: %d remembered, %d queued, want %d", st.at, len(s.last), len(s.order)-s.head, st.kept)
		}
	}
}

// TestRefusedTokenEndsRun: a wrong token retried getMe every few seconds for ever
// (issue 20); a 401 now ends Run at once with ErrTokenRefused, naming telegram.token.
func TestRefusedTokenEndsRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0, func(c *Config, _ *Options) { c.Token = "123:" + strings.Repeat("x", 35) })
	done := make(chan error, 1)
	go func() { done <- h.ch.Run(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTokenRefused) || !strings.Contains(err.Error(), "telegram.token") {
			t.Errorf("Run = %v, want ErrTokenRefused naming telegram.token", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still retrying a refused token")
	}
	if w := h.sleeps.all(); len(w) != 0 {
		t.Errorf("waited %v before giving up, want no retry", w)
	}
}

// BenchmarkNewStranger is one new sender while maxStrangers are remembered, all within
// the hour (a flood of new senders): the worst case of due.
func BenchmarkNewStranger(b *testing.B) {
	s := newStrangers()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for u := range int64(maxStrangers) {
		s.due(u, now)
	}
	u := int64(maxStrangers)
	for b.Loop() {
		u++
		s.due(u, now.Add(time.Minute))
	}
}

// BenchmarkStrangerChurn is a steady stream of new senders, one a second, each remembered
// for the hour: the map stays near full and the oldest entry goes with each new one.
func BenchmarkStrangerChurn(b *testing.B) {
	s := newStrangers()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := int64(0)
	for b.Loop() {
		u++
		now = now.Add(time.Hour / maxStrangers)
		s.due(u, now)
	}
}
