package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
	"github.com/anima-bot/anima/deploy/systemd"
	"github.com/anima-bot/anima/storage"
)

// fakeRunner records the commands an installer runs; health fails until healthy says.
type fakeRunner struct {
	mu      sync.Mutex
	calls   []string
	healthy func(n int) bool // n: health checks so far, this one included
	checks  int
}

func (r *fakeRunner) Run(_ context.Context, name string, args ...string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, strings.Join(append([]string{name}, args...), " "))
	if len(args) > 0 && args[0] == "health" {
		r.checks++
		if r.healthy != nil && !r.healthy(r.checks) {
			return "", errors.New("exit status 1: not ready")
		}
		return "ready\n", nil
	}
	return "", nil
}

// initFile runs `anima init` against fakes into a folder of its own, as a new user
// would, and puts a store (a real bbolt file) at its storage.path, ./data/anima.db beside
// it: the first conversation. It returns the file's path.
func initFile(t *testing.T, tgURL, aiURL string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "anima.yaml")
	cmd := exec.Command(binary, "init", "--yes", "--api-url", tgURL, "--llm-base-url", aiURL, "--model", "qwen2.5:7b",
		"--user-id", "4242", "--out", path)
	cmd.Env = append(os.Environ(), "ANIMA_CONFIG=", "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken, "ANIMA_STORAGE_PATH=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	st, err := storage.Open(filepath.Join(filepath.Dir(path), "data", "anima.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// testInstaller is an installer into a folder of the test's own, recording commands.
func testInstaller(t *testing.T, system bool, out *bytes.Buffer) (*installer, *fakeRunner) {
	t.Helper()
	r := &fakeRunner{}
	in := &installer{root: t.TempDir(), run: r, out: out, system: system, exe: binary,
		sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
	if !system {
		in.user, in.home = "ada", "/home/ada"
	}
	return in, r
}

// TestInstall runs every step of `anima install` and `anima uninstall` into the test's
// folder, for the system unit (root) and the user unit: the binary, init's file (0600)
// and the first conversation's store (a store that opens) where the unit expects them,
// the unit the repository ships, systemctl told to reload, enable and restart, lingering
// for a user, `anima health` asked until ready; uninstall stops and removes the unit and
// binary and leaves the store and the file, saying where.
func TestInstall(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	tg := telegramtest.New(t)
	for _, tc := range []struct {
		name                   string
		system                 bool
		bin, config, store     string
		unit, unitText         string
		commands, uncommands   []string
		healthArgs, storeNamed string
	}{
		{name: "system", system: true, bin: "/usr/local/bin/anima", config: "/etc/anima/anima.yaml", store: "/var/lib/anima/anima.db",
			unit: "/etc/systemd/system/anima.service", unitText: systemd.SystemUnit,
			commands: []string{"systemctl daemon-reload", "systemctl enable anima.service", "systemctl restart anima.service",
				"/usr/local/bin/anima health --timeout 5s /etc/anima/anima.yaml", "/usr/local/bin/anima health --timeout 5s /etc/anima/anima.yaml"},
			uncommands: []string{"systemctl disable --now anima.service", "systemctl daemon-reload"},
			storeNamed: "/var/lib/private/anima"},
		{name: "user", bin: "/home/ada/.local/bin/anima", config: "/home/ada/.config/anima/anima.yaml", store: "/home/ada/.local/share/anima/anima.db",
			unit: "/home/ada/.config/systemd/user/anima.service", unitText: systemd.UserUnit,
			commands: []string{"systemctl --user daemon-reload", "systemctl --user enable anima.service", "systemctl --user restart anima.service",
				"loginctl enable-linger ada",
				"/home/ada/.local/bin/anima health --timeout 5s /home/ada/.config/anima/anima.yaml",
				"/home/ada/.local/bin/anima health --timeout 5s /home/ada/.config/anima/anima.yaml"},
			uncommands: []string{"systemctl --user disable --now anima.service", "systemctl --user daemon-reload"},
			storeNamed: "loginctl disable-linger ada"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := initFile(t, tg.URL, ai.URL())
			var out bytes.Buffer
			in, r := testInstaller(t, tc.system, &out)
			r.healthy = func(n int) bool { return n > 1 } // starting: the first check finds nothing yet
			if err := in.install(waitCtx(t, 20*time.Second), path); err != nil {
				t.Fatalf("install: %v\n%s", err, out.String())
			}
			if !slices.Equal(r.calls, tc.commands) {
				t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(r.calls, "\n"), strings.Join(tc.commands, "\n"))
			}
			mode := func(p string) os.FileMode {
				st, err := os.Stat(in.at(p))
				if err != nil {
					t.Fatalf("%s not installed: %v\n%s", p, err, out.String())
				}
				return st.Mode().Perm()
			}
			if m := mode(tc.bin); m != 0o755 {
				t.Errorf("%s mode %v", tc.bin, m)
			}
			if m := mode(tc.config); m != 0o600 {
				t.Errorf("%s mode %v, want 0600", tc.config, m)
			}
			if m := mode(tc.store); m != 0o600 {
				t.Errorf("%s mode %v, want 0600", tc.store, m)
			}
			if got, _ := os.ReadFile(in.at(tc.unit)); string(got) != tc.unitText {
				t.Errorf("%s is not the unit the repository ships", tc.unit)
			}
			raw, _ := os.ReadFile(path)
			if got, _ := os.ReadFile(in.at(tc.config)); !bytes.Equal(got, raw) {
				t.Errorf("%s differs from init's file, which reads $ANIMA_STORAGE_PATH already", tc.config)
			}
			st, err := storage.Open(in.at(tc.store), storage.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("the store copied is not a store: %v", err)
			}
			_ = st.Close()

			out.Reset()
			r.calls = nil
			if err := in.uninstall(waitCtx(t, 20*time.Second)); err != nil {
				t.Fatalf("uninstall: %v\n%s", err, out.String())
			}
			if !slices.Equal(r.calls, tc.uncommands) {
				t.Errorf("uninstall commands %q, want %q", r.calls, tc.uncommands)
			}
			for _, gone := range []string{tc.unit, tc.bin} {
				if _, err := os.Stat(in.at(gone)); !os.IsNotExist(err) {
					t.Errorf("uninstall left %s", gone)
				}
			}
			for _, kept := range []string{tc.store, tc.config} {
				if _, err := os.Stat(in.at(kept)); err != nil {
					t.Errorf("uninstall took %s: %v", kept, err)
				}
				if !strings.Contains(out.String(), kept) {
					t.Errorf("uninstall does not say where %s is:\n%s", kept, out.String())
				}
			}
			if !strings.Contains(out.String(), tc.storeNamed) {
				t.Errorf("uninstall does not say %q:\n%s", tc.storeNamed, out.String())
			}
		})
	}
}

// TestInstallUnready: a service that never answers /readyz fails the install, naming
// the journal to read.
func TestInstallUnready(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	tg := telegramtest.New(t)
	var out bytes.Buffer
	in, r := testInstaller(t, false, &out)
	r.healthy = func(int) bool { return false }
	err := in.install(waitCtx(t, 20*time.Second), initFile(t, tg.URL, ai.URL()))
	if err == nil || !strings.Contains(err.Error(), "not ready after 1m0s") || !strings.Contains(err.Error(), "journalctl --user -u anima") {
		t.Errorf("install = %v, want not ready, naming the journal", err)
	}
}

// TestInstallSetsTheStore: a file whose storage.path does not read $ANIMA_STORAGE_PATH
// (or has none) is installed reading it, so the service finds the store where its unit
// keeps it; the rest of the file stays.
func TestInstallSetsTheStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"telegram: {token: x}\nstorage:\n  path: ./data/anima.db # mine\n", "storage:\n  path: ${ANIMA_STORAGE_PATH:-/s/anima.db} # mine\n"},
		{"telegram: {token: x}\n", "storage:\n  path: ${ANIMA_STORAGE_PATH:-/s/anima.db}\n"},
		{"storage:\n  path: ${ANIMA_STORAGE_PATH:-x.db}\n", "storage:\n  path: ${ANIMA_STORAGE_PATH:-x.db}\n"},
	} {
		got, err := storeIn([]byte(tc.in), "/s/anima.db")
		if err != nil || !strings.Contains(string(got), tc.want) || !strings.Contains(string(got), "token: x") && strings.Contains(tc.in, "token") {
			t.Errorf("storeIn(%q) = %q, %v; want it to hold %q", tc.in, got, err, tc.want)
		}
	}
}
