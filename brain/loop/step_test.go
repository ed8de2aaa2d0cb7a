package loop_test

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
	"github.com/anima-bot/anima/brain/loop"
)

// thoughtNeuron emits one thought for a chat, once.
type thoughtNeuron struct{ fired bool }

func (n *thoughtNeuron) Name() string { return "test_thought" }

func (n *thoughtNeuron) Check(now time.Time, _ *brain.State) (brain.Signal, bool) {
	if n.fired {
		return brain.Signal{}, false
	}
	n.fired = true
	return brain.Signal{Type: brain.SignalThought, Source: "test_thought", Chat: 9, Text: "ask how the exam went", At: now}, true
}

func TestNeuronThoughtWakesCognition(t *testing.T) {
	t.Parallel()
	st := brain.NewState(time.UTC)
	st.Upsert(quietRel(9, time.Hour))
	agg := aggregation.New(noProactive(), aggregation.Options{})
	auto := autonomic.New(autonomic.Default(), &thoughtNeuron{})
	step := loop.NewStepper(loop.StepperDeps{State: st, Autonomic: auto, Aggregator: agg})
	wakes := step.Step(t0, nil)
	if len(wakes) != 1 || wakes[0].Chat != 9 || wakes[0].Reason.Code != brain.ReasonThought {
		t.Fatalf("wakes = %+v, want one thought wake for chat 9", wakes)
	}
	if again := step.Step(t0.Add(time.Second), nil); len(again) != 0 {
		t.Errorf("the handled thought woke cognition again: %+v", again)
	}
}
