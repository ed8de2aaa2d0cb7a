package loop

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// gateDrafter blocks every Draft until the test lets it through (or its ctx ends) and
// records what it was asked to show.
type gateDrafter struct {
	entered chan string   // a Draft began, with its text
	release chan struct{} // lets one Draft finish
	err     error         // returned by a Draft that finishes
	mu      sync.Mutex
	ended   []error // ctx errors of Drafts cut short
}

func (g *gateDrafter) Draft(ctx context.Context, _ int64, text string) error {
	g.entered <- text
	select {
	case <-g.release:
		return g.err
	case <-ctx.Done():
		g.mu.Lock()
		g.ended = append(g.ended, ctx.Err())
		g.mu.Unlock()
		return ctx.Err()
	}
}

func recvText(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no draft")
		return ""
	}
}

// TestDraftPumpNeverBlocksTheRun: while the Drafter hangs, Draft returns at once and keeps
// only the latest text; stopping cancels the draft in flight and ends the goroutine.
func TestDraftPumpNeverBlocksTheRun(t *testing.T) {
	t.Parallel()
	g := &gateDrafter{entered: make(chan string, 10), release: make(chan struct{})}
	var wg sync.WaitGroup
	p, stop := startDrafts(context.Background(), g, 0, &wg)
	ctx := context.Background()

	if err := p.Draft(ctx, 1, "a"); err != nil {
		t.Fatal(err)
	}
	if got := recvText(t, g.entered); got != "a" {
		t.Fatalf("first draft %q", got)
	}
	// The Drafter hangs on "a": these return at once, and only the last is kept.
	for _, s := range []string{"ab", "abc", "abcd"} {
		if err := p.Draft(ctx, 1, s); err != nil {
			t.Fatal(err)
		}
	}
	g.release <- struct{}{}
	if got := recvText(t, g.entered); got != "abcd" {
		t.Fatalf("after the hang the drafter showed %q, want the latest text", got)
	}
	stop() // "abcd" still hangs: it is cancelled
	wg.Wait()
	if len(g.ended) != 1 || !errors.Is(g.ended[0], context.Canceled) {
		t.Fatalf("drafts cut short = %v, want the one in flight", g.ended)
	}
	select {
	case s := <-g.entered:
		t.Fatalf("draft %q after stop", s)
	default:
	}
}

// TestDraftPumpReportsRefusal: once the Drafter failed, the next Draft says so.
func TestDraftPumpReportsRefusal(t *testing.T) {
	t.Parallel()
	refused := errors.New("refused")
	g := &gateDrafter{entered: make(chan string, 10), release: make(chan struct{}, 1), err: refused}
	var wg sync.WaitGroup
	p, stop := startDrafts(context.Background(), g, 0, &wg)
	defer func() { stop(); wg.Wait() }()

	g.release <- struct{}{}
	if err := p.Draft(context.Background(), 1, "a"); err != nil {
		t.Fatal(err)
	}
	recvText(t, g.entered)
	wg.Wait() // the pump ends after the refusal
	if err := p.Draft(context.Background(), 1, "ab"); !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the refusal", err)
	}
}

// TestDraftPumpWaitsForSlowAnswers: before the delay nothing is shown, and an answer done
// by then (stop) shows nothing at all; after it, the latest text is shown.
func TestDraftPumpWaitsForSlowAnswers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := &gateDrafter{entered: make(chan string, 10), release: make(chan struct{}, 10)}
		var wg sync.WaitGroup
		p, stop := startDrafts(context.Background(), g, 250*time.Millisecond, &wg)
		_ = p.Draft(context.Background(), 1, "a")
		_ = p.Draft(context.Background(), 1, "ab")
		time.Sleep(249 * time.Millisecond) // synctest: the fake clock, no real wait
		synctest.Wait()
		if len(g.entered) != 0 {
			t.Fatal("a draft was shown before the delay")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := <-g.entered; got != "ab" {
			t.Fatalf("draft %q, want the latest text", got)
		}
		g.release <- struct{}{}
		stop()
		wg.Wait()

		p, stop = startDrafts(context.Background(), g, 250*time.Millisecond, &wg)
		_ = p.Draft(context.Background(), 1, "instant answer")
		stop()
		wg.Wait()
		if len(g.entered) != 0 {
			t.Fatal("an answer done before the delay was drafted")
		}
	})
}
