package main

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ioCounters are the process's I/O counters from /proc/self/io.
type ioCounters struct {
	wchar, writeBytes int64
}

func readIO() ioCounters {
	var c ioCounters
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "wchar":
			c.wchar = n
		case "write_bytes":
			c.writeBytes = n
		}
	}
	return c
}

// memKiB returns VmRSS and VmHWM from /proc/self/status, in KiB.
func memKiB() (rss, hwm int64) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm
}

// cpuTime is the process's user plus system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU is the calling thread's user plus system time (the caller locks its OS
// thread): what a call cost in CPU, whatever else the machine is doing.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD (Linux)
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sample is a snapshot of the counters a window is measured between.
type sample struct {
	at  time.Time
	cpu time.Duration
	io  ioCounters
}

func snap() sample { return sample{at: time.Now(), cpu: cpuTime(), io: readIO()} }

// percentile returns the p-th percentile (0..100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64)
}

func kb(n float64) string { return strconv.FormatFloat(n/1024, 'f', 1, 64) }
