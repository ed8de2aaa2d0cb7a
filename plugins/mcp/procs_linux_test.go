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
		if err := New(nil, nil, Options{Pids: path, Logger: slog.New(slog.NewTextHandler(logs, nil))}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
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
