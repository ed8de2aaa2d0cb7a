package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// serviceGCPercent is the service's GOGC when the environment sets none. anima's live
// heap is small (a few MB even with thousands of relationships), so the Go runtime's
// floor of a 4 MB heap goal at GOGC 100, not the live heap, decides how much heap it
// holds; at 75 the floor is 3 MB. Measured with loadtest on 2 idle cores (200 messages
// from 200 users, three runs each): resident after the messages 22.3–22.5 MB at 100,
// 21.7–21.8 MB at 75, 21.4 MB at 50; CPU per message 4.45–4.80 ms at 100, 5.0–5.1 ms at
// 75, 5.4–6.05 ms at 50. 75 is the least that keeps anima under 21 MiB.
const serviceGCPercent = 75

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
