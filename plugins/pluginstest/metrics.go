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
	v, ok := braintest.Metric(t, g, name, labels...)
	if !ok {
		t.Fatalf("no series %s with labels %q", name, labels)
	}
	return v
}
