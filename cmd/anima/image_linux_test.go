package main

import (
	"debug/elf"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// imageProbe lives in the executable's data segment (initialised, written at run time):
// releasing the image must leave it as the program wrote it.
var imageProbe = [4]int{1, 2, 3, 4}

// TestReleaseImage: the read-only mappings of the test binary are given back (RssFile
// falls) and the data segment keeps what was written to it; the code runs on after.
func TestReleaseImage(t *testing.T) {
	imageProbe[0] = 42
	before, after, err := releaseImage()
	if err != nil {
		t.Fatal(err)
	}
	if before == 0 || after >= before {
		t.Errorf("RssFile %d → %d bytes, want it to fall", before, after)
	}
	if imageProbe != [4]int{42, 2, 3, 4} {
		t.Errorf("data segment after release = %v, want what was written: [42 2 3 4]", imageProbe)
	}
	spans, err := imageSpans(0)
	if err != nil || len(spans) != 0 {
		t.Errorf("imageSpans(inode 0) = %v, %v; want none", spans, err)
	}
}

// TestReleaseImageDropsTables: after the release, most of the executable's function tables
// are out of the page cache (mincore over a fresh mapping of the file), where the whole
// table was cached before.
func TestReleaseImageDropsTables(t *testing.T) {
	ef, err := elf.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".gopclntab")
	ef.Close()
	if _, err := os.ReadFile("/proc/self/exe"); err != nil { // the whole file in the cache
		t.Fatal(err)
	}
	before := cachedPages(t, sec.Offset, sec.Size)
	if _, _, err := releaseImage(); err != nil {
		t.Fatal(err)
	}
	after := cachedPages(t, sec.Offset, sec.Size)
	if total := int(sec.Size+4095) / 4096; before < total*9/10 || after > before/2 {
		t.Errorf(".gopclntab pages in the page cache: %d before, %d after the release (of %d); want all, then under half", before, after, total)
	}
}

// cachedPages counts the pages of [off, off+size) of the executable in the page cache.
func cachedPages(t *testing.T, off, size uint64) int {
	t.Helper()
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := off &^ 4095
	length := int(off + size - start)
	m, err := syscall.Mmap(int(f.Fd()), int64(start), length, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	vec := make([]byte, (length+4095)/4096)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(length), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
