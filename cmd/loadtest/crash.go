package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Crash run: what a SIGKILL repeats.
const (
	crashPause  = 3 * time.Second // a message's pause (and a kill's moment) is uniform in [0, crashPause)
	crashSettle = 3 * time.Second // after the last message: time for a late repeat to arrive
	targetCrash = 2               // repeated replies allowed in a run (issue 27)
)

// crashPass is what one pass of the crash run measured.
type crashPass struct {
	repeats, lost int
	wchar, wbytes int64 // /proc/<pid>/io wchar and write_bytes, summed over the pass's processes
}

// crash sends lt.o.crashMessages messages, one user each, with a random pause after each
// (uniform in [0, crashPause): the reply lands early in it, so a kill mostly finds anima
// idle with its last reply sent); the first pass kills nothing (the bytes written per
// message at this pace), the second SIGKILLs anima at the end of lt.o.crash of the pauses
// drawn at random and starts it again on the same store. Both passes share the pauses.
func (lt *loadtest) crash(ctx context.Context) error {
	seed := lt.o.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	n := lt.o.crashMessages
	pauses := make([]time.Duration, n)
	for i := range pauses {
		pauses[i] = time.Duration(rng.Int64N(int64(crashPause)))
	}
	kills := map[int]bool{}
	for _, i := range rng.Perm(n)[:lt.o.crash] {
		kills[i] = true
	}
	lt.printf("crash: %d messages, one user each, a pause uniform in [0, %v) after each pushed message; seed %d\n",
		n, crashPause, seed)
	clean, err := lt.crashPass(ctx, "crash-clean", pauses, nil)
	if err != nil {
		return fmt.Errorf("clean pass: %w", err)
	}
	lt.printf("   no kill:          %d repeated, %d lost; per message wchar %.1f KB, write_bytes %.1f KB\n",
		clean.repeats, clean.lost, float64(clean.wchar)/float64(n)/1e3, float64(clean.wbytes)/float64(n)/1e3)
	killed, err := lt.crashPass(ctx, "crash-kill", pauses, kills)
	if err != nil {
		return fmt.Errorf("kill pass: %w", err)
	}
	lt.printf("   %2d SIGKILLs:      %d repeated, %d lost; per message wchar %.1f KB, write_bytes %.1f KB\n",
		lt.o.crash, killed.repeats, killed.lost, float64(killed.wchar)/float64(n)/1e3, float64(killed.wbytes)/float64(n)/1e3)
	lt.judge("repeated after SIGKILLs", strconv.Itoa(killed.repeats), fmt.Sprintf("≤ %d in %d kills", targetCrash, lt.o.crash), killed.repeats <= targetCrash)
	lt.judge("lost after SIGKILLs", strconv.Itoa(killed.lost), "0", killed.lost == 0)
	return nil
}

// crashPass runs anima on a fresh store for the messages, killing it at the end of the
// pauses in kills and restarting it, and counts the replies each user got.
func (lt *loadtest) crashPass(ctx context.Context, name string, pauses []time.Duration, kills map[int]bool) (crashPass, error) {
	var cp crashPass
	f, err := newFakes()
	if err != nil {
		return cp, err
	}
	defer f.close()
	users := make([]int64, len(pauses))
	for i := range users {
		users[i] = firstUser + int64(i)
	}
	dir, cfg, err := lt.configure(f, name, users)
	if err != nil {
		return cp, err
	}
	start := func() (*proc, error) { return lt.startPolling(ctx, f, dir, cfg) }
	// account adds what p has handed to write and written so far.
	account := func(p *proc) error {
		wchar, wbytes, err := ioCounters(p.pid())
		cp.wchar += wchar
		cp.wbytes += wbytes
		return err
	}
	p, err := start()
	if err != nil {
		return cp, err
	}
	defer func() { p.kill() }()
	for i, u := range users {
		f.tg.PushText(u, u, fmt.Sprintf("message %d: will you say this once?", i+1))
		if kills[i] {
			if err := sleepCtx(ctx, pauses[i]); err != nil {
				return cp, err
			}
			if err := account(p); err != nil {
				return cp, err
			}
			p.kill()
			if p, err = start(); err != nil {
				return cp, fmt.Errorf("restart after kill %d: %w", i+1, err)
			}
		}
		wctx, cancel := p.watch(ctx)
		err := lt.awaitReply(wctx, f.tg, u)
		cancel()
		if err != nil {
			return cp, lt.procErr(p, wctx, fmt.Errorf("message %d: %w", i+1, err))
		}
		if !kills[i] {
			if err := sleepCtx(ctx, pauses[i]); err != nil {
				return cp, err
			}
		}
	}
	if err := sleepCtx(ctx, crashSettle); err != nil {
		return cp, err
	}
	if err := account(p); err != nil {
		return cp, err
	}
	if _, err := p.stop(); err != nil {
		return cp, lt.procErr(p, ctx, fmt.Errorf("stop: %w", err))
	}
	for _, u := range users {
		switch got := len(f.tg.SentTo(u)); {
		case got == 0:
			cp.lost++
		case got > 1:
			cp.repeats += got - 1
		}
	}
	return cp, nil
}

// sleepCtx waits d or until ctx ends (brain.Sleep), returning why ctx ended: the
// process's exit when it is a proc's watch context.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if brain.Sleep(ctx, d) != nil {
		return context.Cause(ctx)
	}
	return nil
}

// ioCounters reads wchar (bytes handed to write(2) and its kin) and write_bytes (bytes the
// process caused to be written to storage, counted as page-cache pages are dirtied) from
// /proc/<pid>/io.
func ioCounters(pid int) (wchar, wbytes int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read io counters: %w", err)
	}
	for line := range strings.Lines(string(raw)) {
		key, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		var dst *int64
		switch key {
		case "wchar":
			dst = &wchar
		case "write_bytes":
			dst = &wbytes
		default:
			continue
		}
		if *dst, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("read io counters: %s: %w", key, err)
		}
	}
	return wchar, wbytes, nil
}
