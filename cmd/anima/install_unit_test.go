package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// TestInstalledUnitsVerify: the units anima install writes pass `systemd-analyze
// verify` without a word (scripts/systemd-check's rule), the user unit with --user; the
// ExecStart binary is the one install put under the test's folder. Skipped when
// systemd-analyze is missing.
func TestInstalledUnitsVerify(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found (apt-get install systemd): the installed units are not verified")
	}
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	tg := telegramtest.New(t)
	path := initFile(t, tg.URL, ai.URL())
	for _, system := range []bool{true, false} {
		var out bytes.Buffer
		in, _ := testInstaller(t, system, &out)
		if err := in.install(waitCtx(t, 20*time.Second), path); err != nil {
			t.Fatalf("install: %v\n%s", err, out.String())
		}
		l, err := in.layout()
		if err != nil {
			t.Fatal(err)
		}
		unit, err := os.ReadFile(in.at(l.unit))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(unit), "ExecStart="+unitExec(system), "ExecStart="+in.at(l.bin), 1)
		dir := t.TempDir()
		file := filepath.Join(dir, "anima.service")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"verify", file}
		cmd := exec.Command(analyze, args...)
		if !system {
			run := filepath.Join(dir, "run")
			if err := os.Mkdir(run, 0o700); err != nil {
				t.Fatal(err)
			}
			cmd = exec.Command(analyze, append([]string{"--user"}, args...)...)
			cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+run)
		}
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify %s (system %t): %v\n%s", l.unit, system, err, out)
		}
	}
}

// unitExec is the ExecStart binary of the unit install writes, as the unit spells it.
func unitExec(system bool) string {
	if system {
		return "/usr/local/bin/anima"
	}
	return "%h/.local/bin/anima"
}

// TestUserUnitRunsInitsFile runs the ExecStart line of the user unit anima install
// wrote the way systemd would (%h the home folder under the test's, only the unit's
// Environment=, in its WorkingDirectory=), on the binary, file and store install put
// in place: anima answers the owner from init's file and keeps its store where the unit
// says, and stops within TimeoutStopSec on SIGTERM. (The system unit is the shipped
// one, which TestSystemdUnitRunsInitsFile runs.) Not parallel: the binary install
// copied is executed, which a child forked meanwhile could hold open (ETXTBSY).
func TestUserUnitRunsInitsFile(t *testing.T) {
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	tg := telegramtest.New(t)
	path := initFile(t, tg.URL, ai.URL())
	var out bytes.Buffer
	in, _ := testInstaller(t, false, &out)
	if err := in.install(waitCtx(t, 20*time.Second), path); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	l, _ := in.layout()
	home := in.at(in.home)
	unit := serviceSectionText(t, in.at(l.unit), home)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "ANIMA_METRICS_LISTEN=127.0.0.1:0"} // the port may be taken here
	for _, e := range unit["Environment"] {
		env = append(env, strings.Fields(e)...)
	}
	args := strings.Fields(unit["ExecStart"][0])
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Dir = env, unit["WorkingDirectory"][0]
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("ExecStart=%s: %v", unit["ExecStart"][0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s:\n%s", unit["ExecStart"][0], stderr.String())
		}
	})
	tg.PushText(4242, 4242, "hello from the user service")
	if _, err := tg.WaitCalls(waitCtx(t, 20*time.Second), "sendMessage", 1); err != nil {
		t.Fatalf("the user unit's command did not answer the owner: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".local/share/anima/anima.db")); err != nil {
		t.Errorf("the store is not where the user unit keeps it: %v", err)
	}
	stopIn, err := time.ParseDuration(unit["TimeoutStopSec"][0])
	if err != nil {
		t.Fatal(err)
	}
	if err := stopWithin(cmd, done, stopIn); err != nil {
		t.Errorf("%v (TimeoutStopSec %s)", err, stopIn)
	}
}

// serviceSectionText is serviceSection of the unit at path with %h read as home.
func serviceSectionText(t *testing.T, path, home string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	expanded := filepath.Join(t.TempDir(), "unit")
	if err := os.WriteFile(expanded, []byte(strings.ReplaceAll(string(raw), "%h", home)), 0o644); err != nil {
		t.Fatal(err)
	}
	return serviceSection(t, expanded)
}

// TestInstallDryRunCLI: `anima install --dry-run FILE` through the real command line
// prints every step and each file with its contents, the token hidden, and touches
// nothing: the folder of init's file is as it was, and no command ran (a real systemctl
// would have failed in a test).
func TestInstallDryRunCLI(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	ai.SetModels("qwen2.5:7b")
	tg := telegramtest.New(t)
	path := initFile(t, tg.URL, ai.URL())
	before := listTree(t, filepath.Dir(path))
	var stdout, stderr strings.Builder
	if code := run([]string{"install", "--dry-run", path}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	got := stdout.String()
	want := []string{"this binary) to /usr/local/bin/anima", "write /etc/anima/anima.yaml, mode 0600", "to /var/lib/anima/anima.db",
		"write /etc/systemd/system/anima.service", "LoadCredential=anima.yaml:/etc/anima/anima.yaml",
		"run systemctl daemon-reload", "run systemctl enable anima.service", "run systemctl restart anima.service",
		"health --timeout 5s /etc/anima/anima.yaml", "--dry-run: nothing was done", `token: "[the token, hidden]"`}
	if os.Geteuid() != 0 {
		home, _ := os.UserHomeDir()
		want = []string{"this binary) to " + home + "/.local/bin/anima", "write " + home + "/.config/anima/anima.yaml, mode 0600",
			"to " + home + "/.local/share/anima/anima.db", "write " + home + "/.config/systemd/user/anima.service",
			"ExecStart=%h/.local/bin/anima run", "run systemctl --user daemon-reload", "run systemctl --user enable anima.service",
			"run loginctl enable-linger", "--dry-run: nothing was done", `token: "[the token, hidden]"`}
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("dry run lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, telegramtest.DefaultToken) {
		t.Errorf("dry run shows the token:\n%s", got)
	}
	if after := listTree(t, filepath.Dir(path)); !slices.Equal(before, after) {
		t.Errorf("dry run changed the folder of init's file:\n%v\nnow\n%v", before, after)
	}
}

// listTree lists the files under dir with their sizes and modification times.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p+" "+fi.ModTime().String()+" "+fi.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
