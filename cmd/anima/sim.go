package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
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
	bin, cleanup, err := simBinary(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "anima sim: %s\n", err)
		return 1
	}
	defer cleanup()
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

// simBinary finds anima-sim: beside this executable first, then on PATH; under `go run`
// (from a checkout, where no anima-sim was built) it builds one into a temporary folder,
// which cleanup removes.
func simBinary(ctx context.Context) (bin string, cleanup func(), err error) {
	none := func() {}
	self, selfErr := os.Executable()
	if selfErr == nil {
		p := filepath.Join(filepath.Dir(self), "anima-sim")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, none, nil
		}
	}
	if p, err := exec.LookPath("anima-sim"); err == nil {
		return p, none, nil
	}
	bi, ok := debug.ReadBuildInfo()
	if selfErr == nil && builtByGoRun(self) && ok && bi.Path != "" {
		return buildSim(ctx, path.Join(path.Dir(bi.Path), "anima-sim"))
	}
	return "", none, errors.New("anima sim needs the anima-sim binary beside anima or on PATH: " +
		"`make build` builds bin/anima-sim, or run `go run ./cmd/anima-sim` with the same flags")
}

// buildSim builds the package pkg (anima-sim, as the module of `go run` names it) into a
// temporary folder with the go command that ran this one.
func buildSim(ctx context.Context, pkg string) (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "anima-sim")
	if err != nil {
		return "", nil, fmt.Errorf("build anima-sim: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	bin = filepath.Join(dir, "anima-sim")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build anima-sim (go build %s, run from the checkout): %w\n%s", pkg, err, out)
	}
	return bin, cleanup, nil
}
