package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// evictImage drops the binary's pages that no process maps from the page cache
// (posix_fadvise DONTNEED). With --touched it runs after the idle reading: anima has given
// back its start-up's pages and reads its image at random from then on, so a page of the
// image it maps afterwards is one it touched, not a neighbour the kernel mapped around it
// (fault-around maps the cached pages of the 64 KB around each fault). The next start
// reads the binary from disk again.
func evictImage(binary string) error {
	f, err := os.Open(binary)
	if err != nil {
		return fmt.Errorf("evict image: %w", err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("evict image: fadvise: %w", err)
	}
	return nil
}
