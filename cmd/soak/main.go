// Command soak drives messages through anima's real store and memory code — record,
// the turn's commit with its search index, mark sent, memory upkeep — without Telegram's
// pacing, and prints what a long life costs: bytes written and CPU per message, file and
// live size per message, Recall and core_memory_search latency, and start-up time and
// memory with the store it built. `make soak` runs it with 100,000 messages.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type config struct {
	messages    int
	chats       int
	seed        uint64
	vocab       int
	queries     int
	dir         string
	keep        bool
	checkpoints []int
	forget      int
	probe       string
	crash       string
	latency     string
	cpuprofile  string
	opts        storage.Options
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var cps string
	fs.IntVar(&c.messages, "n", 100_000, "messages to drive (each is a user turn and its reply)")
	fs.IntVar(&c.chats, "chats", 50, "chats: chat 1 gets every other message, the rest share the others")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (the run is deterministic)")
	fs.IntVar(&c.vocab, "vocab", 50_000, "distinct content words")
	fs.IntVar(&c.queries, "queries", 500, "Recall and search samples at each checkpoint (p99 of 200 is its third-worst sample)")
	fs.StringVar(&c.dir, "dir", "", "directory for the store (default: a new temporary one)")
	fs.BoolVar(&c.keep, "keep", false, "keep the store file")
	fs.StringVar(&cps, "checkpoints", "1000,10000,100000", "message counts to measure at")
	fs.IntVar(&c.forget, "forget", 10, "after the run, forget this many users and re-add as many messages (0: skip)")
	fs.BoolVar(&c.opts.SyncFreelist, "sync-freelist", false, "write bbolt's freelist in every commit (default: once, at Close)")
	fs.DurationVar(&c.opts.SentDelay, "sent-delay", 0, "storage.Options.SentDelay (negative: mark sent in a commit of its own)")
	fs.StringVar(&c.probe, "startup-probe", "", "internal: open this store as anima starts and report")
	fs.StringVar(&c.latency, "latency", "", "time Recall and core_memory_search on this store (one built with -keep) and exit")
	fs.StringVar(&c.crash, "crash-store", "", "internal: open this store, commit once and exit without closing it")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the run (or of -latency) to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.cpuprofile != "" {
		stop, err := startProfile(c.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "soak: %v\n", err)
			return 1
		}
		defer stop()
	}
	if c.probe != "" {
		return probe(c.probe, c.opts, stdout, stderr)
	}
	if c.crash != "" {
		return crash(c.crash, c.opts, stderr)
	}
	if c.latency != "" {
		c.chats = max(c.chats, 2)
		if err := latencyOnly(c, stdout); err != nil {
			fmt.Fprintf(stderr, "soak: %v\n", err)
			return 1
		}
		return 0
	}
	for f := range strings.SplitSeq(cps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "soak: bad checkpoint %q\n", f)
			return 2
		}
		if n <= c.messages {
			c.checkpoints = append(c.checkpoints, n)
		}
	}
	if !slices.Contains(c.checkpoints, c.messages) {
		c.checkpoints = append(c.checkpoints, c.messages)
	}
	slices.Sort(c.checkpoints)
	c.chats = max(c.chats, 2)
	if err := soak(c, stdout); err != nil {
		fmt.Fprintf(stderr, "soak: %v\n", err)
		return 1
	}
	return 0
}

func soak(c config, w io.Writer) error {
	ctx := context.Background()
	dir := c.dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "anima-soak-"); err != nil {
			return err
		}
		if !c.keep {
			defer os.RemoveAll(dir)
		}
	}
	path := filepath.Join(dir, "anima.db")
	st, err := storage.Open(path, c.opts)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	d := &driver{st: st, talk: newTalker(c.seed, c.vocab), at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if d.mem, err = memory.New(st, shortSummarizer{}, memory.Options{}); err != nil {
		return err
	}
	qs := newTalker(c.seed+1, c.vocab) // queries from the same vocabulary, other words

	fmt.Fprintf(w, "soak: %d messages (~300 chars, ~110-char reply), chat 1 takes every other one, %d other chats share the rest; vocabulary %d, seed %d, freelist in every commit %v, sent delay %v\n",
		c.messages, c.chats-1, c.vocab, c.seed, c.opts.SyncFreelist, c.opts.SentDelay)
	fmt.Fprintf(w, "%9s %9s %9s %9s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %7s\n",
		"messages", "wchar/m", "wbytes/m", "pages/m", "cpu/m", "wall/m", "file/m", "live/m",
		"recall50", "recall99", "rcpu99", "search50", "search99", "spread99", "rssMiB")
	fmt.Fprintf(w, "%9s %9s %9s %9s %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %7s\n",
		"", "KB", "KB", "", "ms", "ms", "KB", "KB", "ms", "ms", "ms", "ms", "ms", "ms", "")
	i := 0
	for _, cp := range c.checkpoints {
		sp0, err := st.Space()
		if err != nil {
			return err
		}
		s0 := snap()
		n := cp - i
		for ; i < cp; i++ {
			if err := d.message(ctx, d.chatOf(i, c.chats)); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
		}
		s1 := snap()
		sp1, err := st.Space()
		if err != nil {
			return err
		}
		lat, err := sampleLatency(ctx, d, qs, c)
		if err != nil {
			return err
		}
		rss, _ := memKiB()
		per := func(v int64) float64 { return float64(v) / float64(n) }
		fmt.Fprintf(w, "%9d %9s %9s %9.1f %8s %8s %9s %9s %9s %9s %9s %9s %9s %9s %7.1f\n",
			cp, kb(per(s1.io.wchar-s0.io.wchar)), kb(per(s1.io.writeBytes-s0.io.writeBytes)),
			per(sp1.PageWrites-sp0.PageWrites),
			ms((s1.cpu-s0.cpu)/time.Duration(n)), ms(s1.at.Sub(s0.at)/time.Duration(n)),
			kb(float64(fileSize(path))/float64(cp)), kb(float64(sp1.LiveBytes())/float64(cp)),
			ms(percentile(lat.recall, 50)), ms(percentile(lat.recall, 99)), ms(percentile(lat.recallCPU, 99)),
			ms(percentile(lat.search, 50)), ms(percentile(lat.search, 99)),
			ms(percentile(lat.spread, 99)), float64(rss)/1024)
	}
	sp, err := st.Space()
	if err != nil {
		return err
	}
	pm := func(i int) float64 { return float64(d.pages[i]) / float64(c.messages) }
	fmt.Fprintf(w, "page writes per message (%d-byte pages; a node of several pages counts once): record %.2f, turn commit %.2f, mark sent %.2f, upkeep (fold, summary) %.2f\n",
		sp.PageSize, pm(0), pm(1), pm(2), pm(3))
	bm := func(v [4]int64, i int) string { return kb(float64(v[i]) / float64(c.messages)) }
	fmt.Fprintf(w, "bytes written per message (wchar), KB: record %s, turn commit %s, mark sent %s, upkeep %s\n",
		bm(d.wchar, 0), bm(d.wchar, 1), bm(d.wchar, 2), bm(d.wchar, 3))
	fmt.Fprintf(w, "write_bytes per message (whole page-cache folios dirtied), KB: record %s, turn commit %s, mark sent %s, upkeep %s\n",
		bm(d.wbytes, 0), bm(d.wbytes, 1), bm(d.wbytes, 2), bm(d.wbytes, 3))
	fmt.Fprintf(w, "store after %d messages: file %.1f MiB (data area %.1f MiB), live %.1f MiB, free %.1f MiB\n",
		c.messages, mib(fileSize(path)), mib(sp.FileBytes), mib(sp.LiveBytes()), mib(sp.FreeBytes))
	if c.forget > 0 {
		if err := forgetAndReadd(ctx, d, c, w); err != nil {
			return err
		}
	}
	if err := st.Close(); err != nil {
		return err
	}
	return startup(path, c.opts, w)
}

type latencies struct{ recall, recallCPU, search, spread []time.Duration }

// sampleLatency times Recall (as a turn does it) and core_memory_search in chat 1, and
// Recall in the other chats.
func sampleLatency(ctx context.Context, d *driver, qs *talker, c config) (latencies, error) {
	var l latencies
	// The write phase leaves a large heap behind; collect it first so that its collection
	// is not charged to the first queries (-latency measures a fresh process the same way).
	runtime.GC()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	search := d.mem.Tools()[1]
	for q := range c.queries {
		query := qs.say(300)
		t, cpu0 := time.Now(), threadCPU()
		if _, err := d.mem.Recall(ctx, 1, 1, query, 0); err != nil {
			return l, err
		}
		l.recall = append(l.recall, time.Since(t))
		l.recallCPU = append(l.recallCPU, threadCPU()-cpu0)
		args, _ := json.Marshal(map[string]string{"query": qs.say(40)})
		t = time.Now()
		if _, err := search.Call(ctx, brain.ToolCall{Chat: 1, User: 1, Args: args, Now: d.at}); err != nil {
			return l, err
		}
		l.search = append(l.search, time.Since(t))
		chat := 2 + int64(q%(c.chats-1))
		t = time.Now()
		if _, err := d.mem.Recall(ctx, chat, chat, query, 0); err != nil {
			return l, err
		}
		l.spread = append(l.spread, time.Since(t))
	}
	return l, nil
}

// forgetAndReadd forgets c.forget users of the shared chats, then writes as many
// messages to their chats as they had, and reports the file size before and after: the
// freed pages are reused, so the file should not grow by the re-added data.
func forgetAndReadd(ctx context.Context, d *driver, c config, w io.Writer) error {
	before, err := d.st.Space()
	if err != nil {
		return err
	}
	users := min(c.forget, c.chats-1)
	removed := 0
	t := time.Now()
	for u := range users {
		rep, err := d.st.ForgetUser(int64(2+u), func(tx *storage.Tx, chat int64, seqs []uint64) error { return d.mem.UnindexTx(tx, chat, seqs) })
		if err != nil {
			return err
		}
		removed += rep.Turns
		h, err := d.st.History(int64(2+u), 0)
		if err != nil {
			return err
		}
		removed += len(h)
	}
	forgetTook := time.Since(t)
	// Private chats go whole (Forget), so count what the others had instead.
	per := c.messages / 2 / (c.chats - 1)
	mid, err := d.st.Space()
	if err != nil {
		return err
	}
	for range per {
		for u := range users {
			if err := d.message(ctx, int64(2+u)); err != nil {
				return err
			}
		}
	}
	after, err := d.st.Space()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "forget %d users (~%d messages each, %s): file %.1f → %.1f MiB (live %.1f → %.1f); re-add %d messages: file %.1f MiB (live %.1f), growth %+.1f%%\n",
		users, per, forgetTook.Round(time.Millisecond), mib(before.FileBytes), mib(mid.FileBytes), mib(before.LiveBytes()), mib(mid.LiveBytes()),
		per*users, mib(after.FileBytes), mib(after.LiveBytes()), 100*float64(after.FileBytes-before.FileBytes)/float64(before.FileBytes))
	return nil
}

// fileSize is the store file's size on disk (bbolt grows it in steps ahead of the data).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// latencyOnly times Recall and core_memory_search on an existing store, as the soak's
// checkpoints do, without writing.
func latencyOnly(c config, w io.Writer) error {
	st, err := storage.Open(c.latency, c.opts)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	mem, err := memory.New(st, nil, memory.Options{})
	if err != nil {
		return err
	}
	d := &driver{st: st, mem: mem, at: time.Now()}
	lat, err := sampleLatency(context.Background(), d, newTalker(c.seed+1, c.vocab), c)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d samples: recall p50 %s p99 %s ms (cpu p99 %s), search p50 %s p99 %s ms, other chats' recall p99 %s ms\n",
		c.queries, ms(percentile(lat.recall, 50)), ms(percentile(lat.recall, 99)), ms(percentile(lat.recallCPU, 99)),
		ms(percentile(lat.search, 50)), ms(percentile(lat.search, 99)), ms(percentile(lat.spread, 99)))
	return nil
}

// startProfile starts a CPU profile into path and returns what stops it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
