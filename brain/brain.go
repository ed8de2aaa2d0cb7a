// Package brain is anima's vocabulary: the types, the layers' small interfaces and the
// pure helpers that the engine and the layers share. The core loop that runs the layers
// is package brain/loop; the layers are brain/autonomic, brain/aggregation and
// brain/cognition. They all import brain; brain imports none of them: package bot wires
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
//	rhythm.go        a person's active and sleeping hours, learned from their messages
//	history.go       turns, facts and memory hits
//	journal.go       what a turn writes (TurnRecord) and an outbox entry (Outgoing)
//	dead.go          dead letters: work that failed for good, by kind, and DeadLetters
//	layout.go        the store's layout memory and schedule share with it: buckets, keys
//	media.go         a message's file, the MediaFetcher and the Perceiver that read it
//	voice.go         voice replies: the modes, a person's and a group's choice, the Speaker
//	draft.go         the Drafter that shows an answer while it is written
//	tool.go          tools the model can call
//	limit.go         the limits' names and the Refusals counter they share
//	errors.go        delivery and model errors the engine classifies
//	clock.go         the injected clock
//	text.go          small text helpers shared by the layers
//	when.go          times in words ("yesterday evening", "3 days ago")
package brain
