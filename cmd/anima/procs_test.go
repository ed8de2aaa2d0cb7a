package main

import (
	"runtime"
	"testing"
)

// The service takes one P unless the environment says how many.
func TestOneProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	t.Setenv("GOMAXPROCS", "")
	if got := oneProc(); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("oneProc() = %d, GOMAXPROCS %d; want 1, 1", got, runtime.GOMAXPROCS(0))
	}
	runtime.GOMAXPROCS(2)
	t.Setenv("GOMAXPROCS", "2")
	if got := oneProc(); got != 2 || runtime.GOMAXPROCS(0) != 2 {
		t.Errorf("with GOMAXPROCS=2 set: oneProc() = %d, GOMAXPROCS %d; want 2, 2 (left as it is)", got, runtime.GOMAXPROCS(0))
	}
}
