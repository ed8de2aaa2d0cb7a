package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// serviceGCPercent is the service's GOGC when the environment sets none. anima's live
// heap is small (a few MB even with thousands of relationships), so the Go runtime's
// floor of a 4 MB heap goal, not the live heap, decides how much heap it holds; at 50 the
// goal floor is 2 MB. Measured with loadtest (200 messages from 200 users): anonymous
// memory 9.0 → 7.4 MB after the messages, with the CPU per 200 messages within its noise
// (a collection of a 2 MB heap takes well under a millisecond).
const serviceGCPercent = 50

// tuneMemory sets the service's GC percent unless GOGC is set (an operator's GOGC wins).
func tuneMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serviceGCPercent)
	}
}

// afterStart is called once the start-up of `anima run` is over (it listens, and every MCP
// server's first start has ended): the start-up's garbage (the config's YAML, the store's
// migrations, the plugins' loading, the MCP listings) goes back to the system, and so do
// the pages of the executable that only the start-up read (releaseImage).
func afterStart(log *slog.Logger) {
	debug.FreeOSMemory()
	before, after, err := releaseImage()
	if err != nil {
		log.Debug("image pages not released", "err", err)
		return
	}
	log.Debug("released the start-up's pages of the executable", "rss_file_before", before, "rss_file_after", after)
}
