package main

import (
	"log/slog"
	"runtime/debug"
)

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
