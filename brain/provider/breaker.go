package provider

import (
	"sync"
	"time"
)

// Breaker is a circuit breaker for an endpoint: the model's (brain/cognition), or its
// speech (brain/speech). After threshold consecutive failures it opens: requests fail
// fast, and the outage lasts until a probe succeeds. A probe is one request (no retries) that a caller
// allowed to probe may send while the breaker is open — a model run answering a user (not
// proactive runs or dreams), any reply to be spoken — at most one every probeGap (counted
// from the last request that failed or probed). The probe's success closes the breaker;
// its failure keeps it open.
type Breaker struct {
	threshold int
	probeGap  time.Duration
	onChange  func(open bool, since time.Time)

	mu      sync.Mutex
	fails   int
	since   time.Time // when the breaker opened; zero while closed
	lastTry time.Time // the last failed request or probe while open
	probing bool      // a probe is in flight
}

// NewBreaker returns a closed breaker that opens after threshold consecutive failures and
// lets a probe through every probeGap while open. onChange is called, outside the lock,
// when it opens (since: now) and when it closes (since: when it opened).
func NewBreaker(threshold int, probeGap time.Duration, onChange func(open bool, since time.Time)) *Breaker {
	return &Breaker{threshold: threshold, probeGap: probeGap, onChange: onChange}
}

// Allow reports whether a request may go out now. While the breaker is open only a caller
// that may probe gets true, and only one at a time, once probeGap has passed since the
// last try.
func (b *Breaker) Allow(now time.Time, mayProbe bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() {
		return true
	}
	if !mayProbe || b.probing || now.Sub(b.lastTry) < b.probeGap {
		return false
	}
	b.probing, b.lastTry = true, now
	return true
}

// IsOpen reports whether a request of this kind would fail fast now.
func (b *Breaker) IsOpen(now time.Time, mayProbe bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() {
		return false
	}
	return !mayProbe || b.probing || now.Sub(b.lastTry) < b.probeGap
}

// Outage reports since when the breaker has been open; ok is false while it is closed.
func (b *Breaker) Outage() (since time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.since, !b.since.IsZero()
}

// Success records a request that reached a live endpoint.
func (b *Breaker) Success() {
	b.mu.Lock()
	since := b.since
	b.fails, b.since, b.lastTry, b.probing = 0, time.Time{}, time.Time{}, false
	b.mu.Unlock()
	if !since.IsZero() {
		b.onChange(false, since)
	}
}

// Failure records a request that failed because of the endpoint (timeout, 429, 5xx,
// transport error).
func (b *Breaker) Failure(now time.Time) {
	b.mu.Lock()
	b.fails++
	opened := false
	if b.since.IsZero() && b.fails >= b.threshold {
		b.since, opened = now, true
	}
	if !b.since.IsZero() {
		b.lastTry = now
	}
	b.probing = false
	b.mu.Unlock()
	if opened {
		b.onChange(true, now)
	}
}

// Release gives back a probe slot that ended without a verdict (the caller's context was
// cancelled).
func (b *Breaker) Release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}
