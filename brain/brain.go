// Package brain is anima's vocabulary and its core loop. The layers (autonomic,
// aggregation, cognition) import brain; brain imports none of them: package bot wires
// them together.
//
// One file per concept:
//
//	signal.go        what the world reports (a message, a reaction, a neuron's change)
//	layers.go        the layers' interfaces: Autonomic, Neuron, Aggregator, Thinker
//	wake.go          why cognition is woken, with which profile, and what it decides
//	intent.go        what layers and tools want done, and where each kind is applied
//	message.go       message kinds and conversation statuses
//	relationship.go  anima's state for one chat
//	state.go         everything the layers read: agent-wide values and relationships
//	proactive.go     when anima may write first: pressure, habituation, quiet hours
//	history.go       turns, facts and memory hits
//	tool.go          tools the model can call
//	errors.go        delivery errors a Sender returns
//	clock.go         the injected clock
//	text.go          small text helpers shared by the layers
//
// The core loop (CoreLoop) lives in loop.go and the files beside it.
package brain
