// Command anima-sim replays a scripted user (examples/sim/) through anima's brain, store
// and cognition with an offline model, and writes timeline.csv, timeline.png and
// summary.txt. `anima sim --scenario` runs it. It is a binary of its own because drawing
// with gonum/plot parses a dozen fonts when the process starts: the service binary stays
// without that weight.
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
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("anima-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "config.yaml", "configuration file")
	path := fs.String("scenario", "", "scripted user scenario (YAML)")
	dir := fs.String("out", "", "directory for timeline.csv, timeline.png and summary.txt")
	days := fs.Int("days", 0, "days to simulate (overrides the scenario's days)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || *dir == "" {
		fmt.Fprintln(stderr, "anima-sim: --scenario FILE and --out DIR go together")
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
	start := time.Now()
	res, err := sim.Run(ctx, cfg, sc, *dir, sim.Options{Progress: stderr, Draw: plot.Draw})
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
