package loop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

// latency returns the reply latency histogram's count and sum for kind.
func latency(t *testing.T, reg *prometheus.Registry, kind brain.MessageKind) (uint64, float64) {
	t.Helper()
	ms := braintest.Series(t, reg, "anima_reply_latency_seconds", "kind", string(kind))
	if len(ms) == 0 {
		t.Fatalf("no anima_reply_latency_seconds{kind=%q} series", kind)
	}
	return ms[0].GetHistogram().GetSampleCount(), ms[0].GetHistogram().GetSampleSum()
}

func TestReplyLatency(t *testing.T) {
	t.Parallel()
	// think answers with two messages after two seconds of (simulated) thought.
	think := func(h *harness) func(context.Context, brain.Wake) (brain.Outcome, error) {
		return func(_ context.Context, w brain.Wake) (brain.Outcome, error) {
			h.clock.Advance(2 * time.Second)
			return brain.Outcome{Status: brain.StatusActive, Intents: []brain.Intent{
				brain.SendMessage{Chat: w.Chat, Text: "first part", Kind: brain.KindReply},
				brain.SendMessage{Chat: w.Chat, Text: "second part", Kind: brain.KindReply},
			}}, nil
		}
	}
	for _, tc := range []struct {
		name    string
		sends   int                            // deliveries to wait for
		setup   func(h *harness)               // before the loop starts
		run     func(t *testing.T, h *harness) // once it runs
		kind    brain.MessageKind
		count   uint64
		sum     float64 // exact, or the least when atLeast
		atLeast bool
		arrived time.Time // when set, the first message sent carries it
	}{
		{
			name: "from the arrival to the first message of the reply", sends: 2, kind: brain.KindReply, count: 1, sum: 3,
			arrived: t0.Add(-time.Second),
			run: func(t *testing.T, h *harness) {
				h.think.script = think(h)
				m := h.msg(1, 5, "hi")
				m.Received = t0.Add(-time.Second)
				h.submit(m)
			},
		},
		{
			name: "a reaction the run carries is not what it answers", sends: 2, kind: brain.KindReply, count: 1, sum: 3,
			arrived: t0.Add(-time.Second),
			setup:   func(h *harness) { h.st.Upsert(brain.Relationship{Chat: 5, User: 5}) },
			run: func(t *testing.T, h *harness) {
				h.think.script = think(h)
				h.submit(brain.Signal{ID: 1, Type: brain.SignalReaction, Source: "test", Chat: 5, User: 5, Text: "❤",
					At: t0.Add(-time.Hour), Received: t0.Add(-time.Hour)})
				m := h.msg(2, 5, "hi")
				m.Received = t0.Add(-time.Second)
				h.submit(m)
			},
		},
		{
			name: "a command's answer", sends: 1, kind: brain.KindSystem, count: 1, sum: 4,
			run: func(t *testing.T, h *harness) {
				h.submit(brain.Signal{ID: 1, Type: brain.SignalCommand, Source: "test", Chat: 5, User: 5,
					Text: "/status", At: t0, Received: t0.Add(-4 * time.Second)})
			},
		},
		{
			name: "a signal recorded before arrivals were stamped is not measured", sends: 2, kind: brain.KindReply, count: 0,
			run: func(t *testing.T, h *harness) {
				h.think.script = think(h)
				h.submit(h.msg(1, 5, "hi"))
			},
		},
		{
			name: "a retried reply counts the wait for its retry, once", sends: 1, kind: brain.KindReply, count: 1, sum: 31,
			atLeast: true,
			setup: func(h *harness) {
				h.cfg.Tick = 5 * time.Millisecond
				h.sender.fail = failFirst(errors.New("network down"))
			},
			run: func(t *testing.T, h *harness) {
				m := h.msg(1, 5, "hi")
				m.Received = t0
				h.submit(m)
				recv(t, h.sender.attempts, "the failed attempt")
				advanceUntil(t, h, 31*time.Second, "the retry")
			},
		},
		{
			name: "a partial send ends the latency when its first parts went out", sends: 1, kind: brain.KindReply, count: 1, sum: 0,
			setup: func(h *harness) {
				h.cfg.Tick = 5 * time.Millisecond
				h.sender.fail = failFirst(&brain.PartialSendError{Sent: 1, Err: errors.New("network down")})
			},
			run: func(t *testing.T, h *harness) {
				m := h.msg(1, 5, "hi")
				m.Received = t0
				h.submit(m)
				recv(t, h.sender.attempts, "the partial attempt")
				advanceUntil(t, h, time.Minute, "the rest of the message")
			},
		},
		{
			name: "an outbox entry left by an earlier run keeps its arrival", sends: 1, kind: brain.KindReminder, count: 1, sum: 10,
			setup: func(h *harness) {
				h.build().Deliver([]brain.Outgoing{{ID: 7, Msg: brain.SendMessage{Chat: 5, Text: "take the pills",
					Kind: brain.KindReminder, Arrived: t0.Add(-10 * time.Second)}}})
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, noProactive())
			reg := h.registry()
			if tc.setup != nil {
				tc.setup(h)
			}
			h.start()
			if tc.run != nil {
				tc.run(t, h)
			}
			for len(h.sender.Sent()) < tc.sends {
				recv(t, h.sender.attempts, "a delivery")
			}
			h.stop()
			count, sum := latency(t, reg, tc.kind)
			if count != tc.count {
				t.Errorf("%d latencies observed, want %d", count, tc.count)
			}
			if tc.atLeast && sum < tc.sum || !tc.atLeast && sum != tc.sum {
				t.Errorf("latency sum = %vs, want %vs", sum, tc.sum)
			}
			sent := h.sender.Sent()
			if !tc.arrived.IsZero() && !sent[0].Arrived.Equal(tc.arrived) {
				t.Errorf("first message's arrival = %v, want the user message's", sent[0].Arrived)
			}
			for i, m := range sent[1:] {
				if !m.Arrived.IsZero() {
					t.Errorf("message %d carries an arrival (%v); only the first of a reply does", i+1, m.Arrived)
				}
			}
		})
	}
}
