package innerlife_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/pluginstest"
)

// BenchmarkTickIdle10kRels8Concerns is one idle tick of the brain (autonomic layer with
// the check-in neuron, then the aggregator) with 10,000 relationships each holding 8
// concerns whose check-ins lie ahead. Target: ≤ 10 ms and 0 allocs per tick.
func BenchmarkTickIdle10kRels8Concerns(b *testing.B) {
	stepper, now := idleBrain(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(100 * time.Millisecond)
		if ws := stepper.Step(now, nil); len(ws) != 0 {
			b.Fatalf("idle tick woke %d chats", len(ws))
		}
	}
}

func TestIdleTickWithConcernsAllocatesNothing(t *testing.T) {
	stepper, now := idleBrain(t, 1000)
	allocs := testing.AllocsPerRun(200, func() {
		now = now.Add(100 * time.Millisecond)
		if ws := stepper.Step(now, nil); len(ws) != 0 {
			t.Fatalf("idle tick woke %d chats", len(ws))
		}
	})
	if allocs != 0 {
		t.Errorf("an idle tick with 8 concerns per chat allocates %v times, want 0", allocs)
	}
}

// idleBrain is a stepper over n relationships, each with 8 concerns whose check-ins lie
// days ahead, warmed up (the neurons' per-chat state sized).
func idleBrain(tb testing.TB, n int) (*loop.Stepper, time.Time) {
	now := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	p := innerlife.New(innerlife.Config{}, innerlife.Options{Registerer: prometheus.NewRegistry()})
	bucket := pluginstest.Bucket{}
	st := brain.NewState(time.UTC)
	for chat := int64(1); chat <= int64(n); chat++ {
		st.Upsert(brain.Relationship{Chat: chat, User: chat, LastUserMsg: now.Add(-time.Hour), LastAgentMsg: now.Add(-time.Hour),
			Status: brain.StatusActive})
		for i := range 8 {
			c := innerlife.OpenConcernChange(chat, fmt.Sprintf("%d-%d", chat, i), now.Add(time.Duration(1+i)*24*time.Hour))
			if err := p.Apply(bucket, c, now); err != nil {
				tb.Fatal(err)
			}
		}
	}
	auto := autonomic.New(autonomic.Default(), p.Neurons()...)
	agg := aggregation.New(brain.DefaultProactivePolicy(), aggregation.Options{})
	stepper := loop.NewStepper(loop.StepperDeps{State: st, Autonomic: auto, Aggregator: agg})
	for range 3 {
		now = now.Add(time.Second)
		if ws := stepper.Step(now, nil); len(ws) != 0 {
			tb.Fatalf("idle relationships woke: %+v", ws[0])
		}
	}
	return stepper, now
}
