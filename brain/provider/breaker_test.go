package provider_test

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/provider"
)

// TestBreaker: threshold failures in a row open the breaker; while open, only a caller
// that may probe gets through, one at a time, once the probe gap has passed since the
// last try; a failed probe keeps it open, a released one frees the slot (its try still
// counts for the gap), a success closes it. onChange hears the opening and the closing
// once each.
func TestBreaker(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var changes []bool
	var openedAt time.Time
	b := provider.NewBreaker(2, 10*time.Second, func(open bool, since time.Time) {
		changes = append(changes, open)
		openedAt = since
	})
	b.Failure(t0)
	if !b.Allow(t0, false) {
		t.Fatal("one failure under a threshold of two opened the breaker")
	}
	b.Failure(t0)
	if since, open := b.Outage(); !open || !since.Equal(t0) {
		t.Fatalf("Outage = %v, %v after two failures; want open since %v", since, open, t0)
	}
	at := t0.Add(10 * time.Second)
	switch {
	case b.Allow(t0.Add(9*time.Second), true):
		t.Fatal("a probe before the gap")
	case b.Allow(at, false):
		t.Fatal("a caller that may not probe got through")
	case !b.IsOpen(at, false) || b.IsOpen(at, true):
		t.Fatal("IsOpen does not tell a prober from the rest")
	case !b.Allow(at, true):
		t.Fatal("no probe after the gap")
	case b.Allow(at, true):
		t.Fatal("a second probe while the first is in flight")
	}
	b.Release()
	if at = at.Add(10 * time.Second); !b.Allow(at, true) {
		t.Fatal("a released probe slot was not given back")
	}
	b.Failure(at)
	if b.Allow(at.Add(9*time.Second), true) {
		t.Fatal("a probe less than the gap after a failed probe")
	}
	b.Success()
	if _, open := b.Outage(); open || !b.Allow(at, false) {
		t.Fatal("a success did not close the breaker")
	}
	if len(changes) != 2 || !changes[0] || changes[1] || !openedAt.Equal(t0) {
		t.Errorf("onChange heard %v (last since %v); want open then closed, since %v", changes, openedAt, t0)
	}
}
