// Command loadtest runs the built anima binary against the in-repo fake Telegram Bot API
// and fake OpenAI server on loopback and prints start-up time, per-message overhead, CPU,
// memory and a burst's pacing beside their targets. Missed targets are reported as MISS;
// only errors (no answer, a crash, a bad exit) make it exit non-zero. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// options are the command-line flags.
type options struct {
	binary   string
	messages int    // sequential messages, one user each
	users    int    // burst users
	perUser  int    // burst messages per user
	starts   int    // start-up measurements
	keep     bool   // keep the temporary directory
	profile  string // directory for the traffic run's CPU and heap profiles; empty: none
	mcp      string // argv (split on spaces) of a stdio MCP server every anima is configured with; empty: none
	store    string // a store to start from (only the stored start-up is measured); empty: none
	// gap is the least time from a sequential reply to the next message: at least
	// Telegram's 1/30 s between any two sends, or the global pacing is what gets measured.
	gap time.Duration
	// serve keeps anima and the fakes running, a message every every, until a signal,
	// with /metrics on listen (empty: a free port), instead of measuring.
	serve  bool
	listen string
	every  time.Duration
	// fakesOnly (--fakes) starts only the fake servers, for anima init and anima run started by hand.
	fakesOnly bool
	// erasure, with store: measure /forget's cost to other users for this long (and a
	// slow backup for as long) instead of the start-ups.
	erasure time.Duration
	// crash, when positive, runs only the crash run: crashMessages messages, crash of
	// them followed by a SIGKILL, drawn with seed (0: from the clock).
	crash, crashMessages int
	seed                 uint64
	// idle is how long the traffic run's anima waits, started and untouched, before its
	// idle memory is read (0: not measured); image prints which pages of the binary are
	// resident then and after the sequential messages.
	idle  time.Duration
	image bool
	// touched, after the idle reading, drops the binary's unmapped pages from the page
	// cache, so that what anima maps of its image afterwards is what it touches.
	touched bool
	// growing, when positive, sends this many more messages after the burst from 50 of
	// the sequential users in turn (each after the previous reply) and reports their CPU.
	growing int
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == mcpServeArg {
		os.Exit(serveMCP())
	}
	os.Exit(run())
}

func run() int {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "", "anima binary to test, e.g. bin/anima (required unless --fakes, which starts no anima)")
	fs.IntVar(&o.messages, "messages", 200, "sequential messages, each from its own user")
	fs.IntVar(&o.users, "users", 50, "users in the burst")
	fs.IntVar(&o.perUser, "per-user", 5, "messages per user in the burst")
	fs.IntVar(&o.starts, "starts", 5, "start-up measurements (fresh store each)")
	fs.DurationVar(&o.gap, "gap", 50*time.Millisecond,
		"least time from a sequential reply to the next message (≥ 1/30 s keeps global pacing out of the figure)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (configs, stores, anima logs)")
	fs.StringVar(&o.profile, "profile", "", "write the traffic run's cpu.pprof and heap.pprof (anima --cpuprofile/--memprofile) to this directory")
	fs.StringVar(&o.store, "store", "", "measure only start-ups on a copy of this store (e.g. one `go run ./cmd/soak -keep` built) and the answer to its largest chat")
	fs.BoolVar(&o.serve, "serve", false, "measure nothing: keep anima and the fakes running, a message every --every, until SIGTERM (scripts/stack-check)")
	fs.StringVar(&o.listen, "metrics-listen", "", "with --serve: anima's metrics.listen (default: a free loopback port); the address is printed")
	fs.DurationVar(&o.every, "every", time.Second, "with --serve: time between messages")
	fs.StringVar(&o.mcp, "mcp", "", "configure every anima with this stdio MCP server (argv split on spaces), e.g. \"node …/server-everything/dist/index.js stdio\"")
	fs.BoolVar(&o.fakesOnly, "fakes", false, "start only the fakes and print their URLs and token; a line \"code CODE\" on stdin (anima init's one-time code) has user 4242 write \"/start CODE\" once the bot long-polls, a line \"say TEXT\" has them write TEXT; every reply prints \"answered\" and \"reply\" (scripts/first-run)")
	fs.DurationVar(&o.erasure, "erasure", 0, "with --store: time other users' replies while one user sends /forget yes every second for this long, then during a slow backup as long (0: skip)")
	fs.IntVar(&o.crash, "crash", 0, "measure only what SIGKILLs repeat: this many random kills among --crash-messages messages (issue 27: 12; 0: skip)")
	fs.IntVar(&o.crashMessages, "crash-messages", 48, "with --crash: messages, one user each")
	fs.Uint64Var(&o.seed, "seed", 0, "with --crash: seed of the pauses and kill points (0: from the clock; printed)")
	fs.DurationVar(&o.idle, "idle", 20*time.Second, "before the traffic: read the memory of the untouched anima after this long (0: skip)")
	fs.IntVar(&o.growing, "growing", 0, "after the burst: this many more messages from 50 users in turn, each after the previous reply, and their CPU (issue 27: 1000; 0: skip)")
	fs.BoolVar(&o.touched, "touched", false, "after the idle reading, drop the binary's pages anima no longer maps from the page cache (Linux), so that the memory read after the messages counts the pages of the image they touched, not their 64 KB neighbours")
	fs.BoolVar(&o.image, "image", false, "print which pages of the binary image are resident, by section and by part, when idle and after the sequential messages")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "anima-loadtest-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		return 1
	}
	defer func() {
		if o.keep {
			fmt.Printf("\nkept %s\n", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()

	lt := &loadtest{o: o, dir: dir, in: os.Stdin, out: os.Stdout, tck: clockTicks()}
	if err := lt.run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "\nloadtest: %v\n", err)
		return 1
	}
	return 0
}

func (o *options) validate() error {
	if o.fakesOnly {
		if o.binary != "" || o.serve {
			return errors.New("--fakes starts no anima: drop --binary and --serve")
		}
		return nil
	}
	if o.binary == "" {
		return errors.New("--binary is required (e.g. --binary bin/anima after make build)")
	}
	abs, err := filepath.Abs(o.binary)
	if err != nil {
		return fmt.Errorf("--binary: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		return fmt.Errorf("--binary %s: not a file (run make build first)", o.binary)
	}
	o.binary = abs
	for _, f := range []struct {
		name string
		v    int
	}{{"--messages", o.messages}, {"--users", o.users}, {"--per-user", o.perUser}, {"--starts", o.starts}} {
		if f.v < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", f.name, f.v)
		}
	}
	if o.profile != "" {
		abs, err := filepath.Abs(o.profile)
		if err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fmt.Errorf("--profile: %w", err)
		}
		o.profile = abs
	}
	if o.erasure < 0 || (o.erasure > 0 && o.store == "") {
		return fmt.Errorf("--erasure needs --store and a positive duration, got %v", o.erasure)
	}
	if o.crash < 0 || o.crash > o.crashMessages {
		return fmt.Errorf("--crash must be between 0 and --crash-messages (%d), got %d", o.crashMessages, o.crash)
	}
	if o.gap < 0 {
		return fmt.Errorf("--gap must not be negative, got %v", o.gap)
	}
	if o.every <= 0 {
		return fmt.Errorf("--every must be positive, got %v", o.every)
	}
	if o.listen != "" && !o.serve {
		return errors.New("--metrics-listen is for --serve")
	}
	return nil
}

// loadtest holds one run's settings and the figures it gathered.
type loadtest struct {
	o   options
	dir string
	in  io.Reader // --fakes: where the one-time code comes from
	out io.Writer
	tck int64 // clock ticks per second for /proc/<pid>/stat

	results []result
}

// result is one figure with its target.
type result struct {
	name, value, target string
	ok                  bool
}

func (lt *loadtest) printf(format string, args ...any) { fmt.Fprintf(lt.out, format, args...) }

// judge prints a figure beside its target with PASS or MISS and keeps it for the summary.
func (lt *loadtest) judge(name, value, target string, ok bool) {
	r := result{name: name, value: value, target: target, ok: ok}
	lt.results = append(lt.results, r)
	lt.printf("   %-26s %-14s target %-34s %s\n", name, value, target, verdict(ok))
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func (lt *loadtest) run(ctx context.Context) error {
	if lt.o.fakesOnly {
		return lt.fakesOnly(ctx)
	}
	lt.printf("anima load test: %s\n", lt.o.binary)
	lt.printf("fakes in-process on 127.0.0.1 (instant echo model); %d CPUs; %s; CLK_TCK %d\n\n",
		runtime.NumCPU(), runtime.Version(), lt.tck)

	if lt.o.serve {
		return lt.serve(ctx)
	}
	if lt.o.crash > 0 {
		if err := lt.crash(ctx); err != nil {
			return fmt.Errorf("crash: %w", err)
		}
	} else if lt.o.store != "" && lt.o.erasure > 0 {
		if err := lt.erasure(ctx); err != nil {
			return fmt.Errorf("erasure: %w", err)
		}
	} else if lt.o.store != "" {
		if err := lt.storedStart(ctx); err != nil {
			return fmt.Errorf("stored start-up: %w", err)
		}
	} else {
		if err := lt.startup(ctx); err != nil {
			return fmt.Errorf("start-up: %w", err)
		}
		if err := lt.traffic(ctx); err != nil {
			return err
		}
	}

	lt.printf("\ntargets\n")
	missed := 0
	for _, r := range lt.results {
		lt.printf("   %-26s %-14s target %-34s %s\n", r.name, r.value, r.target, verdict(r.ok))
		if !r.ok {
			missed++
		}
	}
	lt.printf("   %d of %d targets met\n", len(lt.results)-missed, len(lt.results))
	return nil
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// mb formats bytes in (decimal) megabytes.
func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
