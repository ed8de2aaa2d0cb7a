package sim

// For the external tests (example_test.go), which draw with bot/sim/plot: it imports
// this package, so they cannot live inside it.
var (
	Examples  = examples
	SimConfig = simConfig
)
