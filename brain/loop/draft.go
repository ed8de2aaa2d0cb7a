package loop

import (
	"context"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
)

// draftPump hands a run's drafts to a Drafter off the run's goroutine, so that a slow Bot
// API never delays the answer: Draft keeps only the latest text and returns at once, and
// one goroutine shows it. Once the Drafter has failed, Draft returns that error, so
// cognition stops drafting.
type draftPump struct {
	d    brain.Drafter
	wake chan struct{} // capacity 1: a text is waiting

	mu   sync.Mutex
	chat int64
	text string
	has  bool  // text waits to be shown
	err  error // the Drafter's failure
}

// startDrafts starts a pump for d, run by a goroutine that wg owns; stop ends it (and
// cancels a draft in flight: the answer it previewed is complete). Nothing is shown before
// delay has passed: an answer that comes at once needs no preview (like the typing
// indicator), and costs no Bot API call — nor a goroutine: the pump's starts only when
// the delay has passed.
func startDrafts(ctx context.Context, d brain.Drafter, delay time.Duration, wg *sync.WaitGroup) (p *draftPump, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	p = &draftPump{d: d, wake: make(chan struct{}, 1)}
	wg.Add(1)
	timer := time.AfterFunc(max(delay, 0), func() {
		defer wg.Done()
		p.run(ctx)
	})
	var once sync.Once
	return p, func() {
		once.Do(func() {
			cancel()
			if timer.Stop() {
				wg.Done() // the goroutine never started and never will
			}
		})
	}
}

// Draft implements Drafter.
func (p *draftPump) Draft(_ context.Context, chat int64, text string) error {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return p.err
	}
	p.chat, p.text, p.has = chat, text, true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // already signalled: the waiting text is replaced
	}
	return nil
}

func (p *draftPump) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.mu.Lock()
		chat, text, has := p.chat, p.text, p.has
		p.has = false
		p.mu.Unlock()
		if !has {
			continue
		}
		if err := p.d.Draft(ctx, chat, text); err != nil && ctx.Err() == nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
			return
		}
	}
}
