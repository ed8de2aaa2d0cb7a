package sim

import "testing"

// For the external tests (example_test.go), which draw with bot/sim/plot: it imports
// this package, so they cannot live inside it.
var (
	Examples  = examples
	SimConfig = simConfig
)

// WriteExample writes the shared replay of a shipped scenario (runExample) into dir as
// Run writes a replay, and returns what Run returns.
func WriteExample(t *testing.T, name, dir string, draw Drawer) Result {
	t.Helper()
	tl := runExample(t, name)
	if err := tl.write(dir, draw); err != nil {
		t.Fatal(err)
	}
	return tl.result()
}
