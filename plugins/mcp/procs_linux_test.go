package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/anima-bot/anima/brain/braintest"
)

// sleeper starts the test binary as a process that runs until killed, in a process
// group of its own, and returns its stat; the test kills its group when it ends.
func sleeper(t *testing.T) procStat {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startGroup(t, cmd)
}

// TestReapPreviousRun: a start ends the groups the record of a previous run lists that
// still have a process of theirs, and only those: a group whose process started before
// the recorded leader, or is in another session (the pid was reused), a record from
// another boot, a pid that is gone and an unreadable line are left alone.
func TestReapPreviousRun(t *testing.T) {
	t.Parallel()
	ours, earlier, otherSession, otherBoot := sleeper(t), sleeper(t), sleeper(t), sleeper(t)
	line := func(p procStat, dSession int, dStart uint64) string {
		return fmt.Sprintf("%d %d %d\n", p.Pgrp, p.Session+dSession, p.Start+dStart)
	}
	dir := t.TempDir()
	this := filepath.Join(dir, "anima.db.mcp-pids")
	record := "boot " + bootID() + "\n" + line(ours, 0, 0) + line(earlier, 0, 1000) + line(otherSession, 1, 0) +
		"4194000 1 1\n" + "not a group\n"
	if err := os.WriteFile(this, []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db.mcp-pids")
	if err := os.WriteFile(other, []byte("boot another-boot\n"+line(otherBoot, 0, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &braintest.Buffer{}
	for _, path := range []string{this, other} {
		startConfigured(t, path, slog.New(slog.NewTextHandler(logs, nil)))
	}
	waitGone(t, ours.PID, "the recorded group")
	for name, p := range map[string]procStat{"started before the leader": earlier, "in another session": otherSession,
		"from another boot": otherBoot} {
		if !alive(p.PID) || killPending(t, p.PID) {
			t.Errorf("the group %s (%d) was killed", name, p.PID)
		}
	}
	for _, want := range []string{"ended what a previous run's mcp server left running", fmt.Sprintf("pgid=%d processes=1", ours.Pgrp),
		"unreadable lines", "lines=1"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	if n := strings.Count(logs.String(), "ended what"); n != 1 {
		t.Errorf("%d groups ended, want 1:\n%s", n, logs)
	}
	data, err := os.ReadFile(this)
	if err != nil || string(data) != "boot "+bootID()+"\n" {
		t.Errorf("the record after the start is %q (%v), want only the boot line", data, err)
	}
}

// startConfigured runs a Manager with one server configured (a url nothing answers)
// and the record at pids, and stops it at once: its start reaps what the record names.
func startConfigured(t *testing.T, pids string, log *slog.Logger) {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := Server{Name: "x", URL: "http://127.0.0.1:1/mcp"}
	if err := New([]Server{srv}, nil, Options{Pids: pids, Logger: log}).Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	// Fields 3 to 22 of a real line; the command holds a space and a ") (".
	rest := " S 1 4321 4300 34816 4321 4194560 200 0 0 0 1 2 0 0 20 0 1 0 987654 10000"
	for _, tc := range []struct {
		name, line string
		want       procStat
		err        bool
	}{
		{"plain", "4321 (sleep)" + rest, procStat{PID: 4321, Pgrp: 4321, Session: 4300, Start: 987654}, false},
		{"odd command", "4321 (a) (b c)" + rest, procStat{PID: 4321, Pgrp: 4321, Session: 4300, Start: 987654}, false},
		{"zombie", "4321 (x)" + strings.Replace(rest, " S ", " Z ", 1), procStat{PID: 4321, Pgrp: 4321, Session: 4300, Start: 987654, Zombie: true}, false},
		{"short", "4321 (x) S 1 2", procStat{}, true},
		{"no command", "4321 x S", procStat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(4321, tc.line)
			if (err != nil) != tc.err || got != tc.want {
				t.Errorf("parseStat = %+v, %v; want %+v, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestReapRefuses: a start ends no process the record names unless MCP servers are
// configured, the file is a regular file of anima's user that no one else may write and
// no larger than its bound, and the group holds only processes the recorded server can
// have started. Each case names a live process group of the test's own, which must still
// run after the start; a refused file is moved aside, with a warning naming it and why.
func TestReapRefuses(t *testing.T) {
	t.Parallel()
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		name string
		// record returns what the file holds for the group of p, and prepares it at path.
		record    func(t *testing.T, path string, p procStat) string
		sleeper   func(t *testing.T) procStat
		noServers bool
		root      bool   // needs root: chown, or a process of another user
		warn      string // in the log; "" for none
		aside     bool   // the file is moved aside
	}{
		{name: "no mcp server configured", noServers: true, warn: "no mcp server configured"},
		{name: "writable by group", warn: "writable by group or others", aside: true,
			record: func(t *testing.T, path string, p procStat) string {
				chmodAfter(t, path, 0o620)
				return recordOf(p, p.Start)
			}},
		{name: "writable by others", warn: "writable by group or others", aside: true,
			record: func(t *testing.T, path string, p procStat) string {
				chmodAfter(t, path, 0o602)
				return recordOf(p, p.Start)
			}},
		{name: "another user's file", root: true, warn: "not owned by uid", aside: true,
			record: func(t *testing.T, path string, p procStat) string {
				chownAfter(t, path, 4242)
				return recordOf(p, p.Start)
			}},
		{name: "oversize", warn: "larger than", aside: true,
			record: func(t *testing.T, path string, p procStat) string {
				truncateAfter(t, path, 64<<20)
				return recordOf(p, p.Start)
			}},
		{name: "symbolic link", warn: "a symbolic link", aside: true,
			record: func(t *testing.T, path string, p procStat) string {
				target := path + ".target"
				if err := os.Symlink(target, path); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, []byte(recordOf(p, p.Start)), 0o600); err != nil {
					t.Fatal(err)
				}
				return ""
			}},
		{name: "start time 0", warn: "has no start time",
			record: func(t *testing.T, path string, p procStat) string { return recordOf(p, 0) }},
		{name: "leader started after the record (pid reused)",
			record: func(t *testing.T, path string, p procStat) string { return recordOf(p, p.Start-1) }},
		{name: "another user's process", root: true, sleeper: func(t *testing.T) procStat { return sleepAs(t, 4242) },
			warn: "cannot have started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.root && !root {
				t.Skip("needs root")
			}
			var victim procStat
			if tc.sleeper != nil {
				victim = tc.sleeper(t)
			} else {
				victim = sleeper(t)
			}
			path := filepath.Join(t.TempDir(), "anima.db.mcp-pids")
			content := recordOf(victim, victim.Start)
			if tc.record != nil {
				content = tc.record(t, path, victim)
			}
			if content != "" {
				writeKeepingMode(t, path, content)
			}
			logs := &braintest.Buffer{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			if tc.noServers {
				if err := New(nil, nil, Options{Pids: path, Logger: log}).Run(context.Background()); err != nil {
					t.Fatal(err)
				}
			} else {
				startConfigured(t, path, log)
			}
			if !alive(victim.PID) || killPending(t, victim.PID) {
				t.Errorf("the group %d named by the record was killed", victim.Pgrp)
			}
			if strings.Contains(logs.String(), "ended what") {
				t.Errorf("the log says a group was ended:\n%s", logs)
			}
			if tc.warn != "" && !strings.Contains(logs.String(), tc.warn) {
				t.Errorf("the log lacks %q:\n%s", tc.warn, logs)
			}
			if tc.warn != "" && !strings.Contains(logs.String(), path) {
				t.Errorf("the log does not name %s:\n%s", path, logs)
			}
			aside, _ := filepath.Glob(path + ".bad-*")
			if tc.aside != (len(aside) == 1) {
				t.Errorf("moved aside: %v, want %v", aside, tc.aside)
			}
			if tc.aside {
				if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
					t.Errorf("after the start the record is %v (%v), want a fresh 0600 file", fi, err)
				}
			}
			if tc.noServers {
				if data, err := os.ReadFile(path); err != nil || string(data) != content {
					t.Errorf("the record was touched with no server configured: %q (%v)", data, err)
				}
			}
		})
	}
}

// recordOf is a record of this boot naming p's group with start time start.
func recordOf(p procStat, start uint64) string {
	return fmt.Sprintf("boot %s\n%d %d %d\n", bootID(), p.Pgrp, p.Session, start)
}

// writeKeepingMode writes content to path, keeping the mode (and owner) of a file that
// is already there, or creating it 0600.
func writeKeepingMode(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// chmodAfter, chownAfter and truncateAfter create the empty file path and change it;
// the record is then written into it.
func chmodAfter(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	writeKeepingMode(t, path, "")
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func chownAfter(t *testing.T, path string, uid int) {
	t.Helper()
	writeKeepingMode(t, path, "")
	if err := os.Chown(path, uid, -1); err != nil {
		t.Fatal(err)
	}
}

// truncateAfter makes path a sparse file of size bytes, holding nothing but zeros after
// the record.
func truncateAfter(t *testing.T, path string, size int64) {
	t.Helper()
	writeKeepingMode(t, path, "")
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// sleepAs starts `sleep 60` as user uid, in a process group of its own (root only).
func sleepAs(t *testing.T, uid uint32) procStat {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	return startGroup(t, cmd)
}

// startGroup starts cmd (in a process group of its own), ends its group when the test
// does, and returns its /proc stat.
func startGroup(t *testing.T, cmd *exec.Cmd) procStat {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killPgid(cmd.Process.Pid); _ = cmd.Wait() })
	st, err := readStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPidsFileMax: the bound holds a boot line and a longest record line for each of
// pidsGroupsMin servers, or of more when more are configured.
func TestPidsFileMax(t *testing.T) {
	t.Parallel()
	boot := "boot 01234567-89ab-cdef-0123-456789abcdef\n"
	line := "4194304 4194304 18446744073709551615\n"
	for _, n := range []int{0, 1, pidsGroupsMin, 1000} {
		full := boot + strings.Repeat(line, max(n, pidsGroupsMin))
		if got := pidsFileMax(n); got != int64(len(full)) {
			t.Errorf("pidsFileMax(%d) = %d, want %d", n, got, len(full))
		}
	}
}
