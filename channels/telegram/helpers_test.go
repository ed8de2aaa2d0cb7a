package telegram

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/channels/channelstest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

const (
	alice int64 = 1001 // allowed
	bob   int64 = 2002 // not allowed
	group int64 = -100777
)

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
	rec    *channelstest.Recorder
	sink   *chanSink
	reg    *prometheus.Registry
	sleeps *sleeps
}

// newHarness builds a channel against a fresh fake. edit may change the config and
// options before New.
func newHarness(t *testing.T, offset int64, edit func(*Config, *Options)) *harness {
	t.Helper()
	h := &harness{srv: telegramtest.New(t), rec: channelstest.NewRecorder(offset), sink: newSink(), reg: prometheus.NewRegistry(), sleeps: &sleeps{}}
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
	ended := channelstest.Run(t, h.ch.Run)
	select {
	case <-h.ch.Ready():
	case <-ended:
		t.Fatal("Run ended before the channel was ready") // its error is reported as the test ends
	case <-time.After(10 * time.Second):
		t.Fatal("channel not ready")
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}
