package mcp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, string(b))
}

// parseStat parses a /proc/<pid>/stat line: "pid (comm) state ppid pgrp session … starttime …",
// where comm may hold spaces and parentheses, so the fields are counted from its last ")".
func parseStat(pid int, line string) (procStat, error) {
	i := strings.LastIndex(line, ")")
	if i < 0 {
		return procStat{}, fmt.Errorf("stat of %d: no command", pid)
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("stat of %d: %d fields", pid, len(f)+2)
	}
	pgrp, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("stat of %d: not numbers: %q", pid, line[i+1:])
	}
	return procStat{PID: pid, Pgrp: pgrp, Session: sid, Start: start, Zombie: f[0] == "Z"}, nil
}

// listProcs reads the stat of every process.
func listProcs() ([]procStat, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil { // gone since ReadDir, or not ours to read
			out = append(out, st)
		}
	}
	return out, nil
}

// bootID names this boot: after a reboot no process of a previous run is left, and
// start times count from another boot.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
