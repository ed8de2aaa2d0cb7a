// Package channelstest holds fakes for testing channels: an in-memory Recorder in place
// of the store's inbox, and Run, which runs a channel (or a server) until the test ends.
package channelstest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels"
)

var _ channels.Recorder = (*Recorder)(nil)

// ErrDiskFull is what Record returns while failures are queued with FailNext.
var ErrDiskFull = errors.New("disk full")

// Recorder is an in-memory channels.Recorder for one source: it numbers the signals it
// records from 1 and keeps the last offset above 0. Its methods are safe for concurrent
// use.
type Recorder struct {
	mu      sync.Mutex
	offset  int64
	sigs    []brain.Signal
	calls   int
	failN   int                // fail the next failN Record calls
	onStore func(offset int64) // called inside Record, before storing
	changed chan struct{}      // closed and replaced on each Record
}

// NewRecorder returns a recorder whose stored offset is offset, as if a previous run
// had recorded up to it.
func NewRecorder(offset int64) *Recorder {
	return &Recorder{offset: offset, changed: make(chan struct{})}
}

// Offset returns the stored offset.
func (r *Recorder) Offset(string) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offset, nil
}

// Record stores sigs with their IDs and sets the offset (when offset > 0), or fails with
// ErrDiskFull while failures are queued.
func (r *Recorder) Record(_ string, sigs []brain.Signal, offset int64) ([]brain.Signal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.failN > 0 {
		r.failN--
		return nil, ErrDiskFull
	}
	if r.onStore != nil {
		r.onStore(offset)
	}
	out := make([]brain.Signal, len(sigs))
	for i, s := range sigs {
		s.ID = uint64(len(r.sigs) + 1)
		r.sigs = append(r.sigs, s)
		out[i] = s
	}
	if offset > 0 {
		r.offset = offset
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return out, nil
}

// FailNext makes the next n Record calls fail with ErrDiskFull.
func (r *Recorder) FailNext(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failN = n
}

// OnStore sets fn to be called inside each successful Record, with its offset, before
// anything is stored; fn runs under the recorder's lock and must not call it.
func (r *Recorder) OnStore(fn func(offset int64)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onStore = fn
}

// SetOffset sets the stored offset, as a previous run would have left it.
func (r *Recorder) SetOffset(offset int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offset = offset
}

// Calls returns how many times Record was called, failures included.
func (r *Recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// Snapshot returns the signals recorded so far and the stored offset.
func (r *Recorder) Snapshot() ([]brain.Signal, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]brain.Signal(nil), r.sigs...), r.offset
}

// WaitOffset waits until the stored offset reaches offset and returns the signals
// recorded by then; it fails t after 10 seconds.
func (r *Recorder) WaitOffset(t testing.TB, offset int64) []brain.Signal {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ch, got := r.changed, r.offset
		r.mu.Unlock()
		if got >= offset {
			sigs, _ := r.Snapshot()
			return sigs
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("stored offset %d, want ≥ %d", got, offset)
		}
	}
}
