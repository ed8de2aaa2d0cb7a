package loop

import (
	"context"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Drive runs one tick of the loop at now over sigs (recorded signals, as they would
// arrive), then waits for every job the tick started, and the jobs those started, and
// applies them (and first what Apply handed it since): the same step, queue, turn and delivery as Run, without Run's ticker,
// inbox or persister. It is for a simulation that moves a clock of its own (bot/sim);
// never call it while Run runs.
func (l *Loop) Drive(ctx context.Context, now time.Time, sigs []brain.Signal) {
	for len(l.applied) > 0 {
		l.applyOutside(<-l.applied)
	}
	l.step(ctx, now, sigs, true)
	for l.running > 0 {
		l.finish(ctx, <-l.done)
	}
}
