package bot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/anima-bot/anima/storage"
)

// compactDelay is how long after a /forget the store is compacted: the confirmation goes
// out first, and forgets that come together share one compaction.
const compactDelay = time.Second

// storeCompactor compacts the store (storage.Store.Compact) after /forget, off the chat's
// critical path: requests are coalesced and served compactDelay later, and one still
// pending when the service stops is served before Run returns. It is also the store's
// upkeep timer: it prunes old dead letters.
type storeCompactor struct {
	store *storage.Store
	log   *slog.Logger
	delay time.Duration
	kick  chan struct{}
	// now, when set, makes Run prune old dead letters at start and every deadPruneEvery
	// (dead.go).
	now func() time.Time
}

var _ compactor = (*storeCompactor)(nil)

func newStoreCompactor(store *storage.Store, log *slog.Logger) *storeCompactor {
	return &storeCompactor{store: store, log: log.With("component", "compactor"), delay: compactDelay, kick: make(chan struct{}, 1)}
}

// CompactSoon asks for a compaction; it never blocks.
func (c *storeCompactor) CompactSoon() {
	select {
	case c.kick <- struct{}{}:
	default: // one is already pending
	}
}

// Run serves compaction requests until ctx ends.
func (c *storeCompactor) Run(ctx context.Context) error {
	c.pruneDead()
	prune := time.NewTicker(deadPruneEvery)
	defer prune.Stop()
	for {
		select {
		case <-prune.C:
			c.pruneDead()
			continue
		case <-ctx.Done():
			select {
			case <-c.kick:
				c.compact()
			default:
			}
			return nil
		case <-c.kick:
		}
		timer := time.NewTimer(c.delay)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
		c.compact()
	}
}

func (c *storeCompactor) compact() {
	rep, err := c.store.Compact()
	if err != nil {
		c.log.Error("compact the store after /forget", "err", err)
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
