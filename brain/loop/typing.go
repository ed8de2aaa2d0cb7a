package loop

import (
	"context"
	"sync"
	"time"
)

// Typer shows a "typing…" indicator; a Sender may implement it.
type Typer interface {
	Typing(ctx context.Context, chat int64) error
}

// typing shows the typing indicator while the model works: first after TypingDelay (an
// instant answer needs none), then every 4 s. The returned stop never cancels a request
// in flight (that would cost the connection); the loop's WaitGroup owns the goroutine.
// The goroutine starts only when the delay has passed: a run that ends sooner (most
// answers) costs a timer, not a goroutine that must be woken to end.
func (l *Loop) typing(ctx context.Context, chat int64) (stop func()) {
	t, ok := l.send.(Typer)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	l.wg.Add(1)
	timer := time.AfterFunc(l.cfg.TypingDelay, func() {
		defer l.wg.Done()
		every := time.NewTimer(0)
		defer every.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-every.C:
			}
			if err := t.Typing(ctx, chat); err != nil && ctx.Err() == nil {
				l.log.Debug("typing indicator", "err", err)
			}
			every.Reset(4 * time.Second)
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			if timer.Stop() {
				l.wg.Done() // the goroutine never started and never will
			}
		})
	}
}
