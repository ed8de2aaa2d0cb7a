// Package loop is anima's core loop: the engine that runs the brain's layers over the
// vocabulary of package brain. It takes signals from its Inbox, runs the autonomic and
// aggregation layers (its Stepper) on every tick and on every arrival, wakes cognition per
// chat (in order, bounded concurrency, off the tick), commits each turn through its
// Journal, delivers the turn's messages through its Sender and applies the intents that
// come back. Package bot builds one with New and runs it.
//
// The interfaces it consumes are declared here, named for what the loop needs: Sender
// (a channel), Journal, OutboxUpdater, Maintainer and StateStore (storage, through
// package bot), CommandHandler (bot's commands), Typer (a channel's typing
// indicator) and OutageReporter (cognition). The layers' own contracts (Thinker,
// Autonomic, Aggregator), the store's DeadLetters and the types they share are brain's.
//
// Its files are the steps a signal takes:
//
//	inbox.go      the bounded inbox channels submit signals to
//	loop.go       Loop: New, Run (the tick), Deliver, the bounded stop
//	drive.go      Drive: one tick and its jobs to the end, for a simulation's own clock (bot/sim)
//	step.go       the Stepper: observe signals, run the layers, book the wakes
//	queue.go      per-chat queues: fold bursts, order, bounded concurrency
//	ratelimit.go  runs per user and minute: throttled chats, one notice (limit.go: the window)
//	turn.go       a chat's job off the tick: think (cognition, the answer, the record) and commit
//	perceive.go   a wake's media read before cognition, or left out with a notice
//	speak.go      replies to be spoken voiced before the commit (the Speaker), or left as text
//	command.go    a slash command's job
//	typing.go     the typing indicator while a run is in flight; draft.go the streamed drafts
//	duplicate.go  proactive messages that repeat a recent one are not sent
//	apply.go      intents applied in the loop's memory (acks, deferrals, state, thoughts)
//	delivery.go   sending a turn's outbox, backoff and retries of failed sends
//	latency.go    reply latency, from arrival to send
//	outage.go     chats held while the model is unreachable, released in order
//	dead.go       work that failed for good, kept as dead letters
//	persist.go    relationships and acks written behind the loop (StateStore)
//	journal.go    the Journal the loop commits turns through
//	metrics.go    the loop's and the stepper's metrics
package loop
