package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	osuser "os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/anima-bot/anima/brain"
)

// installCommand is `anima install` and `anima uninstall`: anima in service under
// systemd from init's file, or out of it again (install_plan.go says what each does).
// As root it is the system unit (deploy/systemd/anima.service), else the user unit
// (deploy/systemd/user/anima.service, `systemctl --user`).
func installCommand(cmd string, args []string, stdout, stderr io.Writer) int {
	f := newFlags(cmd, stderr)
	dryRun := f.fs.Bool("dry-run", false, "print every step, and each file with its contents (the token and key hidden), without doing any")
	if code, ok := f.parse(args, stdout); !ok {
		return code
	}
	in, err := newInstaller(stdout, *dryRun)
	if err != nil {
		fmt.Fprintf(stderr, "anima %s: %s\n", cmd, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd == "uninstall" {
		err = in.uninstall(ctx)
	} else {
		err = in.install(ctx, *f.config)
	}
	if err != nil {
		fmt.Fprintf(stderr, "anima %s: %s\n", cmd, err)
		return 1
	}
	return 0
}

// runner runs a command (systemctl, loginctl, the installed anima) and returns what it
// printed; the error says how it ended. Tests record the commands instead.
type runner interface {
	Run(ctx context.Context, name string, args ...string) (string, error)
}

// execRunner runs commands on this machine.
type execRunner struct{}

func (execRunner) Run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// installer puts anima in service: every file it writes is under root, every command
// goes through run, so that a test takes every step into a folder of its own.
type installer struct {
	root   string // the filesystem root: "/", or a test's folder
	run    runner
	out    io.Writer
	dryRun bool
	system bool   // the system unit (as root); else the user unit
	user   string // the user, for loginctl (user unit)
	home   string // the user's home folder (user unit)
	exe    string // the running executable, copied into place
	// sleep waits between health checks; tests pass one that does not.
	sleep func(ctx context.Context, d time.Duration) error
}

// newInstaller is the installer for this process: as root the system unit, else the
// user unit of the user running it.
func newInstaller(out io.Writer, dryRun bool) (*installer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, fmt.Errorf("find this binary: %w", err)
	}
	in := &installer{root: "/", run: execRunner{}, out: out, dryRun: dryRun, system: os.Geteuid() == 0, exe: exe, sleep: brain.Sleep}
	if !in.system {
		u, err := osuser.Current()
		if err != nil {
			return nil, fmt.Errorf("who runs this: %w", err)
		}
		in.user, in.home = u.Username, u.HomeDir
		if h, err := os.UserHomeDir(); err == nil {
			in.home = h
		}
	}
	return in, nil
}

// step is one thing install or uninstall does: what it says, the contents of the file
// it writes (shown by --dry-run), and the doing.
type step struct {
	say  string
	show string
	do   func(ctx context.Context) error
}

// take does the steps in order, saying each; with dryRun it only says them.
func (in *installer) take(ctx context.Context, steps []step) error {
	for i, s := range steps {
		fmt.Fprintf(in.out, "%d. %s\n", i+1, s.say)
		if in.dryRun {
			if s.show != "" {
				fmt.Fprintf(in.out, "   ----\n%s   ----\n", indent(s.show, "   "))
			}
			continue
		}
		if s.do == nil {
			continue
		}
		if err := s.do(ctx); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, s.say, err)
		}
	}
	return nil
}

// indent puts prefix before each line of s.
func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// at is where path, as the service sees it, is in this installer's filesystem.
func (in *installer) at(path string) string { return filepath.Join(in.root, path) }

// writeFile writes data at path (under root) with mode, creating its folder with
// dirMode, whole or not at all (a rename).
func (in *installer) writeFile(path string, data []byte, mode, dirMode os.FileMode) error {
	p := in.at(path)
	if err := os.MkdirAll(filepath.Dir(p), dirMode); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// systemctl is the command line of systemctl for this installer's unit.
func (in *installer) systemctl(args ...string) []string {
	if in.system {
		return append([]string{"systemctl"}, args...)
	}
	return append([]string{"systemctl", "--user"}, args...)
}

// command is a step that runs argv.
func (in *installer) command(argv []string, why string) step {
	say := "run " + strings.Join(argv, " ")
	if why != "" {
		say += ": " + why
	}
	return step{say: say, do: func(ctx context.Context) error {
		_, err := in.run.Run(ctx, argv[0], argv[1:]...)
		return err
	}}
}

// healthWait is how long install waits for the started service to answer /readyz.
const healthWait = 60 * time.Second

// health is the step that asks the service, with the installed binary's `anima health`,
// until it is ready or healthWait has passed.
func (in *installer) health(l layout) step {
	argv := []string{l.bin, "health", "--timeout", "5s", l.config}
	logs := "journalctl -u anima"
	if !in.system {
		logs = "journalctl --user -u anima"
	}
	return step{say: fmt.Sprintf("run %s until it says ready (up to %v): the service answers", strings.Join(argv, " "), healthWait),
		do: func(ctx context.Context) error {
			var last error
			for waited := time.Duration(0); waited <= healthWait; waited += 2 * time.Second {
				if _, last = in.run.Run(ctx, argv[0], argv[1:]...); last == nil {
					fmt.Fprintln(in.out, "   ready")
					return nil
				}
				if err := in.sleep(ctx, 2*time.Second); err != nil {
					return err
				}
			}
			return fmt.Errorf("not ready after %v (%w): see %s", healthWait, last, logs)
		}}
}
