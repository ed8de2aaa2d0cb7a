package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/storage"
)

// Timing of the compactions that erase forgotten data from the file.
const (
	// compactDelay is how long after a /forget, after a quiet spell, the store is
	// compacted: the confirmation goes out first, and forgets that come together share
	// one compaction.
	compactDelay = time.Second
	// compactBusyRetry is how soon a compaction that a long reader kept from the store
	// (storage.ErrBusy) tries again.
	compactBusyRetry = 10 * time.Second
	// compactPoll is how often Run looks at the clock for a compaction that is due.
	compactPoll = time.Second
)

// storeCompactor compacts the store (storage.Store.Compact) after /forget, off the chat's
// critical path. Requests are coalesced: the first after a quiet spell is served
// compactDelay later, and no compaction starts sooner than interval after the previous
// one started, however many users forget meanwhile — a /forget sent over and over costs
// one compaction per interval, not one each. What is owed survives a crash: the store
// records a pending erasure in the commit that deletes, and a compactor that starts on a
// store owing one compacts it compactDelay after it starts. One still due when the
// service stops is served before Run returns. It is also the store's upkeep timer: it
// prunes old dead letters (dead.go).
type storeCompactor struct {
	store    *storage.Store
	log      *slog.Logger
	clock    brain.Clock
	delay    time.Duration
	interval time.Duration
	kick     chan struct{}

	mu   sync.Mutex
	due  time.Time // when the next compaction is to run; zero: none is owed
	last time.Time // when the last one started; zero: none yet
}

var _ compactor = (*storeCompactor)(nil)

func newStoreCompactor(store *storage.Store, clock brain.Clock, interval time.Duration, log *slog.Logger) *storeCompactor {
	return &storeCompactor{store: store, log: log.With("component", "compactor"), clock: clock,
		delay: compactDelay, interval: interval, kick: make(chan struct{}, 1)}
}

// CompactSoon asks for a compaction and returns when it is due to run: the time by which
// the deleted data is gone from the file (give or take the compaction's own seconds). It
// never blocks.
func (c *storeCompactor) CompactSoon() time.Time {
	c.mu.Lock()
	at := c.schedule(c.clock.Now())
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	return at
}

// schedule makes a compaction due, at the earliest compactDelay after now and interval
// after the last one, unless one already is; it returns when. The caller holds c.mu.
func (c *storeCompactor) schedule(now time.Time) time.Time {
	if c.due.IsZero() {
		c.due = now.Add(c.delay)
		if !c.last.IsZero() {
			c.due = later(c.due, c.last.Add(c.interval))
		}
	}
	return c.due
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// resume makes a compaction due if the store owes an erasure (a crash came before it).
func (c *storeCompactor) resume() {
	pending, err := c.store.ErasurePending()
	if err != nil {
		c.log.Error("read whether an erasure is owed; compacting to be sure", "err", err)
	}
	if pending || err != nil {
		c.mu.Lock()
		at := c.schedule(c.clock.Now())
		c.mu.Unlock()
		c.log.Info("an erasure is owed from before the last stop: compacting the store", "at", at)
	}
}

// Run serves compaction requests until ctx ends.
func (c *storeCompactor) Run(ctx context.Context) error {
	c.pruneDead()
	prune := time.NewTicker(deadPruneEvery)
	defer prune.Stop()
	c.resume()
	ticker := time.NewTicker(compactPoll)
	defer ticker.Stop()
	for {
		select {
		case <-prune.C:
			c.pruneDead()
			continue
		case <-ctx.Done():
			c.mu.Lock()
			owed := !c.due.IsZero()
			c.mu.Unlock()
			if owed {
				c.compact(c.clock.Now())
			}
			return nil
		case <-ticker.C:
		case <-c.kick:
		}
		c.poll(c.clock.Now())
	}
}

// poll compacts the store if a compaction is due at now.
func (c *storeCompactor) poll(now time.Time) {
	c.mu.Lock()
	due := !c.due.IsZero() && !now.Before(c.due)
	c.mu.Unlock()
	if due {
		c.compact(now)
	}
}

// compact runs the compaction owed; one that fails is owed again, soon if a reader kept
// it out, otherwise an interval later.
func (c *storeCompactor) compact(now time.Time) {
	c.mu.Lock()
	c.due, c.last = time.Time{}, now // requests from now on are for the next one
	c.mu.Unlock()
	rep, err := c.store.Compact()
	if err != nil {
		retry := now.Add(c.interval)
		if errors.Is(err, storage.ErrBusy) {
			retry = now.Add(compactBusyRetry)
		}
		c.mu.Lock()
		if c.due.IsZero() || retry.Before(c.due) {
			c.due = retry
		}
		c.mu.Unlock()
		c.log.Error("compact the store after /forget; trying again later", "retry_at", retry, "err", err)
		return
	}
	c.log.Info("store compacted: forgotten data is gone from the file", "bytes_before", rep.Before, "bytes_after", rep.After, "took", rep.Took.Round(time.Millisecond))
}

// Compact compacts the store at storePath offline. It refuses while a service holds the
// store (storage.ErrLocked): the running service compacts by itself after /forget.
func Compact(storePath string) (storage.CompactReport, error) {
	if _, err := os.Stat(storePath); err != nil {
		return storage.CompactReport{}, fmt.Errorf("compact: no store at %s: %w", storePath, err)
	}
	st, err := storage.Open(storePath, storage.Options{})
	if err != nil {
		return storage.CompactReport{}, fmt.Errorf("compact: %w", err)
	}
	rep, err := st.Compact()
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return rep, err
}
