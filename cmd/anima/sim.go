package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// simCommand is `anima sim`: N silent days under a simulated clock, or with --scenario a
// scripted user, both run by anima-sim (the simulator's scripted model is a test fake the
// service binary does not link).
func simCommand(ctx context.Context, f *cmdFlags, stdout, stderr io.Writer) int {
	if _, ok := loadConfig(*f.config, stderr); !ok {
		return 1
	}
	if *f.days < 1 || *f.days > 366 {
		fmt.Fprintln(stderr, "anima sim: --days must be 1..366")
		return 2
	}
	if simFlagSet(f.fs, "live") || simFlagSet(f.fs, "yes") {
		if *f.scenario == "" {
			fmt.Fprintln(stderr, "anima sim: --live and --yes go with --scenario FILE --out DIR")
			return 2
		}
	}
	if *f.scenario != "" || *f.out != "" {
		if *f.scenario == "" || *f.out == "" {
			fmt.Fprintln(stderr, "anima sim: --scenario FILE and --out DIR go together")
			return 2
		}
	}
	return runSim(ctx, f.simArgs(), stdout, stderr)
}

// simLiveFlags defines --live and --yes, which anima-sim reads (simArgs hands them on):
// a scenario against the configuration's model endpoint, spent only with --yes.
func simLiveFlags(fs *flag.FlagSet) {
	fs.Bool("live", false, "with --scenario: use the configuration's model endpoint instead of the scripted model; prints the expected requests and spends them only with --yes")
	fs.Bool("yes", false, "with --live: spend the requests")
}

// simFlagSet reports whether the boolean flag name was set true.
func simFlagSet(fs *flag.FlagSet, name string) bool {
	fl := fs.Lookup(name)
	return fl != nil && fl.Value.String() == "true"
}

// runSim runs `anima sim` by handing the arguments to the anima-sim binary beside this
// one (or on PATH): drawing the timeline with gonum/plot costs every process that links it
// a few MB at start, and the scripted model is a fake server, neither of which the service
// should carry.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bin, err := simBinary()
	if err != nil {
		fmt.Fprintf(stderr, "anima sim: %s\n", err)
		return 1
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "anima sim: run %s: %s\n", bin, err)
		return 1
	}
	return 0
}

// simBinary finds anima-sim: beside this executable first, then on PATH.
func simBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "anima-sim")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("anima-sim"); err == nil {
		return p, nil
	}
	return "", errors.New("anima sim needs the anima-sim binary beside anima or on PATH: " +
		"`make build` builds bin/anima-sim, or run `go run ./cmd/anima-sim` with the same flags")
}
