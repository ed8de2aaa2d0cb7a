package telegram

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

const (
	alice int64 = 1001 // allowed
	bob   int64 = 2002 // not allowed
	group int64 = -100777
)

// memRecorder is an in-memory channels.Recorder.
type memRecorder struct {
	mu      sync.Mutex
	offset  int64
	sigs    []brain.Signal
	calls   int
	failN   int                // fail the next failN Record calls
	onStore func(offset int64) // called inside Record, before storing
	changed chan struct{}      // closed and replaced on each Record
	offsets []int64            // offsets passed to successful Records
}

func newMemRecorder(offset int64) *memRecorder {
	return &memRecorder{offset: offset, changed: make(chan struct{})}
}

func (r *memRecorder) Offset(string) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offset, nil
}

func (r *memRecorder) Record(_ string, sigs []brain.Signal, offset int64) ([]brain.Signal, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.failN > 0 {
		r.failN--
		return nil, errors.New("disk full")
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
	r.offsets = append(r.offsets, offset)
	close(r.changed)
	r.changed = make(chan struct{})
	return out, nil
}

func (r *memRecorder) snapshot() ([]brain.Signal, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]brain.Signal(nil), r.sigs...), r.offset
}

// waitOffset waits until the stored offset reaches offset.
func (r *memRecorder) waitOffset(t *testing.T, offset int64) []brain.Signal {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ch, got := r.changed, r.offset
		r.mu.Unlock()
		if got >= offset {
			sigs, _ := r.snapshot()
			return sigs
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("stored offset %d, want ≥ %d", got, offset)
		}
	}
}

// chanSink is a channels.Sink collecting signals.
type chanSink struct{ ch chan brain.Signal }

func newSink() *chanSink { return &chanSink{ch: make(chan brain.Signal, 100)} }

func (s *chanSink) Submit(ctx context.Context, sigs ...brain.Signal) error {
	for _, sig := range sigs {
		select {
		case s.ch <- sig:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *chanSink) next(t *testing.T) brain.Signal {
	t.Helper()
	select {
	case sig := <-s.ch:
		return sig
	case <-time.After(10 * time.Second):
		t.Fatal("no signal submitted")
		return brain.Signal{}
	}
}

// sleeps records retry waits without spending them.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ds...)
}

type harness struct {
	srv    *telegramtest.Server
	ch     *Channel
	rec    *memRecorder
	sink   *chanSink
	reg    *prometheus.Registry
	sleeps *sleeps
}

// newHarness builds a channel against a fresh fake. edit may change the config and
// options before New.
func newHarness(t *testing.T, offset int64, edit func(*Config, *Options)) *harness {
	t.Helper()
	h := &harness{srv: telegramtest.New(t), rec: newMemRecorder(offset), sink: newSink(), reg: prometheus.NewRegistry(), sleeps: &sleeps{}}
	cfg := Config{
		Token:        h.srv.Token,
		APIURL:       h.srv.URL,
		AllowedUsers: []int64{alice},
		PollTimeout:  time.Second,
	}
	opts := Options{
		Registerer:      h.reg,
		PerChatInterval: time.Millisecond,
		GlobalRate:      10000,
		Sleep:           h.sleeps.sleep,
	}
	if edit != nil {
		edit(&cfg, &opts)
	}
	ch, err := New(cfg, h.rec, h.sink, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.ch = ch
	return h
}

// start runs the channel until the test ends and waits for it to be ready.
func (h *harness) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ch.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	select {
	case <-h.ch.Ready():
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("channel not ready")
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}
