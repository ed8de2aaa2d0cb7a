package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts a CPU profile into cpuPath (when set) and returns the function that
// ends it and, when memPath is set, writes a heap profile (after a GC, so it shows what is
// live) to memPath. Both are for measuring, not for production: see docs/profiling.md.
//
// Without memPath, heap sampling is switched off: nothing else ever reads a heap profile
// (there is no pprof endpoint), and the runtime's default sampling would otherwise walk a
// stack every 512 KiB allocated and keep a bucket per sampled call stack (and a 1.4 MB
// hash table for them) for the life of the process.
func startProfiles(cpuPath, memPath string) (stop func() error, err error) {
	if memPath != "" {
		// Sample every 4 KiB allocated rather than every 512 KiB: a short run's
		// allocations show in detail.
		runtime.MemProfileRate = 4096
	} else {
		runtime.MemProfileRate = 0
	}
	var cpu *os.File
	if cpuPath != "" {
		cpu, err = os.Create(cpuPath)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			_ = cpu.Close()
			return nil, fmt.Errorf("cpu profile %s: %w", cpuPath, err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				errs = append(errs, fmt.Errorf("cpu profile %s: %w", cpuPath, err))
			}
		}
		if memPath != "" {
			if err := writeHeapProfile(memPath); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return nil
}
