package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestStartProfilesWritesBoth(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "heap.pprof")
	stop, err := startProfiles(cpu, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, mem} {
		st, err := os.Stat(p)
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v, size %d; want a profile", filepath.Base(p), err, sizeOf(st))
		}
	}
}

func TestStartProfilesOffWritesNothing(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	stop, err := startProfiles("", "")
	if err != nil {
		t.Fatal(err)
	}
	// No heap profile will be written, so allocations are not sampled for one.
	if runtime.MemProfileRate != 0 {
		t.Errorf("MemProfileRate = %d without --memprofile; want 0 (sampling off)", runtime.MemProfileRate)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestStartProfilesBadPath(t *testing.T) {
	if _, err := startProfiles(filepath.Join(t.TempDir(), "no", "such", "cpu.pprof"), ""); err == nil {
		t.Error("startProfiles into a missing directory: nil error")
	}
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}
