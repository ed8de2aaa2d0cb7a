package main

import (
	"fmt"
	"os"
	"syscall"
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
	const fadvDontNeed = 4 // POSIX_FADV_DONTNEED on Linux
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return fmt.Errorf("evict image: fadvise: %w", e)
	}
	return nil
}
