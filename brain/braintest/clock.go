// Package braintest holds test helpers shared across anima's packages: a manual clock
// that tests move by hand instead of waiting on real time, the time zones tests place
// people in, and a buffer a logger can write while the test reads it.
package braintest

import (
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
)

var _ brain.Clock = (*Clock)(nil)

// Clock is a brain.Clock that moves only when told to. Its methods are safe for concurrent
// use; the zero value stands at the zero time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to now (backwards too).
func (c *Clock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Gaps returns the time from start to the first of at and between each of at and the
// next: how far apart the events a test recorded went.
func Gaps(start time.Time, at []time.Time) []time.Duration {
	gaps := make([]time.Duration, 0, len(at))
	prev := start
	for _, t := range at {
		gaps = append(gaps, t.Sub(prev))
		prev = t
	}
	return gaps
}

// Fataler is the part of testing.TB that Zone needs (so that the simulator, which links
// this package, does not link package testing).
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Zone returns the time zone name ("Europe/Berlin"); the test fails when there is no zone
// data for it.
func Zone(t Fataler, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v", name, err)
	}
	return loc
}
