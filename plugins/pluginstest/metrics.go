package pluginstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/braintest"
)

// Value is the value of the counter or gauge name in g whose labels include labels,
// given as name, value pairs ("plugin", "greeter"); the test fails when g has no such
// series.
func Value(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !braintest.HasLabels(m, labels...) {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s with labels %q", name, labels)
	return 0
}
