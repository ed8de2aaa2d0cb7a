package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// releaseImage gives back this process's mappings of the read-only parts of its own
// executable (code, read-only data, the runtime's function tables), so that what stays
// resident is what runs after the start-up. The kernel maps a file's pages 64 KB around
// each one touched (fault-around), and the start-up (YAML, flags, config checks, the
// store's migrations, every package's init) touches windows all over the image that the
// service never reads again: 16.5 MB of the 18.6 MB of its loaded sections were resident
// when idle, 4.5 MB after this. A page read again is mapped again from the page cache (a
// minor fault, no I/O). Only private mappings without write permission of the executable's
// inode are released: its data segment (written at run time) is never touched. They are
// also marked as read at random (MADV_RANDOM): should the kernel drop the file's pages from
// its cache, a page read again is read alone, not with megabytes of read-ahead around it.
// It returns the process's file-backed resident memory (RssFile) before and after.
func releaseImage() (before, after int64, err error) {
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		return 0, 0, fmt.Errorf("stat executable: %w", err)
	}
	spans, err := imageSpans(exe.Ino)
	if err != nil {
		return 0, 0, err
	}
	if len(spans) == 0 {
		return 0, 0, errors.New("no read-only mapping of the executable")
	}
	before = rssFile()
	for _, s := range spans {
		for _, advice := range []uintptr{syscall.MADV_DONTNEED, syscall.MADV_RANDOM} {
			if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, s.start, s.end-s.start, advice); e != 0 {
				return before, rssFile(), fmt.Errorf("madvise %#x-%#x: %w", s.start, s.end, e)
			}
		}
	}
	if err := dropTables(); err != nil {
		return before, rssFile(), err
	}
	return before, rssFile(), nil
}

// dropTables asks the kernel to drop the executable's function tables (.gopclntab, a
// third of the image) from its page cache once no process maps them. The runtime reads
// them sparsely — a stack scan reads a few entries of each function on a goroutine's
// stack — but with the whole table cached, each read maps the 64 KB around it: 4.8 MB of
// the 6.8 MB table were resident after 200 messages, 1.5–2.2 MB of it read. Read alone
// from then on (the mapping is MADV_RANDOM), a page is read from disk once and stays. The
// cost is the next start's: it reads the table from disk (start → first getUpdates
// 19–21 → about 30 ms in loadtest, whose starts follow each other).
func dropTables() error {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("read executable: %w", err)
	}
	sec := ef.Section(".gopclntab")
	if sec == nil {
		return errors.New("executable without .gopclntab")
	}
	if err := unix.Fadvise(int(f.Fd()), int64(sec.Offset), int64(sec.Size), unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise .gopclntab: %w", err)
	}
	return nil
}

// span is one mapping's address range.
type span struct{ start, end uintptr }

// imageSpans returns the mappings of /proc/self/maps of file inode ino that are private
// and not writable (perms r-xp or r--p); never one without a file ([vdso], the heap).
func imageSpans(ino uint64) ([]span, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode [path]
		fields := strings.Fields(sc.Text())
		if ino == 0 || len(fields) < 6 || fields[4] != strconv.FormatUint(ino, 10) || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		if perms := fields[1]; perms != "r-xp" && perms != "r--p" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("maps: bad address range %q", fields[0])
		}
		out = append(out, span{uintptr(start), uintptr(end)})
	}
	return out, sc.Err()
}

// rssFile is RssFile of /proc/self/status in bytes, 0 if it cannot be read.
func rssFile() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
