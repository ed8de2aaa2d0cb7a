package cognition

import (
	"sync"
	"time"
)

// breaker is a circuit breaker for the model endpoint: after threshold consecutive
// failures it opens for cooldown, during which requests fail fast; then one probe request
// is let through (half-open): its success closes the breaker, its failure opens it again.
type breaker struct {
	threshold int
	cooldown  time.Duration
	onChange  func(open bool)

	mu       sync.Mutex
	fails    int
	openTill time.Time // zero while closed
	probing  bool      // a half-open probe is in flight
}

func newBreaker(threshold int, cooldown time.Duration, onChange func(open bool)) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown, onChange: onChange}
}

// allow reports whether a request may go out now. In the half-open state only one caller
// gets true until that probe reports back.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openTill.IsZero() {
		return true
	}
	if now.Before(b.openTill) || b.probing {
		return false
	}
	b.probing = true
	return true
}

// isOpen reports whether requests would currently fail fast.
func (b *breaker) isOpen(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openTill.IsZero() && (now.Before(b.openTill) || b.probing)
}

// success records a request that reached a live endpoint.
func (b *breaker) success() {
	b.mu.Lock()
	wasOpen := !b.openTill.IsZero()
	b.fails, b.openTill, b.probing = 0, time.Time{}, false
	b.mu.Unlock()
	if wasOpen {
		b.onChange(false)
	}
}

// failure records a request that failed because of the endpoint (timeout, 429, 5xx,
// transport error).
func (b *breaker) failure(now time.Time) {
	b.mu.Lock()
	b.fails++
	opened := false
	if b.probing || b.fails >= b.threshold {
		opened = b.openTill.IsZero()
		b.openTill = now.Add(b.cooldown)
		b.probing = false
	}
	b.mu.Unlock()
	if opened {
		b.onChange(true)
	}
}

// release gives back a half-open probe slot that ended without a verdict (the caller's
// context was cancelled).
func (b *breaker) release() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}
