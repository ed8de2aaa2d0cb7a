// Command anima-sim replays a scripted user (examples/sim/) through anima's brain, store
// and cognition with an offline model, and writes timeline.csv, timeline.png and
// summary.txt; without --scenario and --out it runs --days silent days (a user who writes
// once and then never again) and prints what anima would send each day. With --live the model is the configuration's own (llm.base_url, api_key,
// the models): it first prints how many requests that should take and runs only with
// --yes. `anima sim` runs it. It is a binary of its own because drawing with gonum/plot
// parses a dozen fonts when the process starts, and because the simulator's scripted
// model is a fake OpenAI server (openaitest, on net/http/httptest): the service binary
// links neither.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // scenario time zones work anywhere

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/bot/sim"
	"github.com/anima-bot/anima/bot/sim/plot"
	"github.com/anima-bot/anima/brain"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("anima-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "config.yaml", "configuration file")
	path := fs.String("scenario", "", "scripted user scenario (YAML)")
	dir := fs.String("out", "", "directory for timeline.csv, timeline.png and summary.txt")
	days := fs.Int("days", 0, "days to simulate (overrides the scenario's days)")
	live := fs.Bool("live", false, "use the configuration's model endpoint instead of the scripted model (prints the expected requests; runs only with --yes)")
	yes := fs.Bool("yes", false, "with --live: spend the requests")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" && *dir == "" && !*live && !*yes {
		return silent(*cfgPath, *days, stdout, stderr)
	}
	if *path == "" || *dir == "" {
		fmt.Fprintln(stderr, "anima-sim: --scenario FILE and --out DIR go together")
		return 2
	}
	if *yes && !*live {
		fmt.Fprintln(stderr, "anima-sim: --yes goes with --live")
		return 2
	}
	if *days < 0 || *days > 366 {
		fmt.Fprintln(stderr, "anima-sim: --days must be 1..366")
		return 2
	}
	cfg, err := config.Check(*cfgPath, false)
	if err != nil {
		fmt.Fprintf(stderr, "anima-sim: %s\n", err)
		return 1
	}
	sc, err := sim.LoadScenario(*path)
	if err != nil {
		fmt.Fprintf(stderr, "anima-sim: %s\n", err)
		return 1
	}
	if *days > 0 {
		sc.Days = *days
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *live {
		if code, ok := confirmLive(ctx, cfg, sc, *yes, stdout, stderr); !ok {
			return code
		}
	}
	start := time.Now()
	res, err := sim.Run(ctx, cfg, sc, *dir, sim.Options{Progress: stderr, Draw: plot.Draw, Live: *live})
	if err != nil {
		fmt.Fprintf(stderr, "anima-sim: %s\n", err)
		return 1
	}
	total := 0
	for _, n := range res.PerDay {
		total += n
	}
	fmt.Fprintf(stdout, "simulated %d days of %q in %v: %d proactive wakes; wrote timeline.csv, timeline.png and summary.txt to %s\n",
		len(res.PerDay), sc.Name, time.Since(start).Round(time.Millisecond), total, *dir)
	return 0
}

// confirmLive prints what a live run of sc should spend, from a dry run with the scripted
// model, and says whether to go on: only with yes. Without it the exit code is 2, as for
// an incomplete command line: nothing was run, and a script that forgot --yes does not
// read an old summary as new.
func confirmLive(ctx context.Context, cfg config.Config, sc sim.Scenario, yes bool, stdout, stderr io.Writer) (int, bool) {
	est, err := sim.EstimateLive(ctx, cfg, sc, sim.Options{Progress: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "anima-sim: estimate: %s\n", err)
		return 1, false
	}
	fmt.Fprintf(stdout, "live run of %q over %d days: about %d model requests (about %d tokens of prompt, from a dry run with the scripted model) to %s with %s and %s\n",
		sc.Name, sc.Days, est.Requests, est.Bytes/4, brain.RedactURL(cfg.LLM.BaseURL), cfg.LLM.FastModel, cfg.LLM.SmartModel)
	if !yes {
		fmt.Fprintln(stderr, "anima-sim: nothing was sent; add --yes to spend them")
		return 2, false
	}
	return 0, true
}

// silent runs days silent days (7 when 0) of the configuration at cfgPath and prints them.
func silent(cfgPath string, days int, stdout, stderr io.Writer) int {
	if days == 0 {
		days = 7
	}
	if days < 1 || days > 366 {
		fmt.Fprintln(stderr, "anima-sim: --days must be 1..366")
		return 2
	}
	cfg, err := config.Check(cfgPath, false)
	if err != nil {
		fmt.Fprintf(stderr, "anima-sim: %s\n", err)
		return 1
	}
	res, err := sim.Silent(cfg, days)
	if err != nil {
		fmt.Fprintf(stderr, "anima-sim: %s\n", err)
		return 1
	}
	sim.Print(stdout, res)
	return 0
}
