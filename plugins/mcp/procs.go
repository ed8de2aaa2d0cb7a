package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// procFile records the process groups of the stdio servers this run started, in a file
// beside the store (Options.Pids), so that the next start ends what they left when anima
// was killed with SIGKILL: the server itself dies with anima (dieWithParent), the
// processes it started (npx's node, a shell's jobs) stay in its group until reap. A
// process that left the group (setsid) is beyond it: only a cgroup (systemd's
// KillMode=control-group) ends that one. Only Linux records: it needs /proc.
//
// The file is "boot <boot id>" and then one "<pgid> <session> <start>" line per group, of
// its leader when it started; written whole to a temporary file and renamed.
type procFile struct {
	path string // "" records nothing (anima mcp list)
	log  *slog.Logger

	mu     sync.Mutex
	groups map[int]procStat // by pgid
}

// procStat is what /proc/<pid>/stat says of a process that procFile needs: its group
// and session, and its start time in clock ticks since boot (field 22), which with the
// pid names one process for the whole uptime, pids being reused.
type procStat struct {
	PID, Pgrp, Session int
	Start              uint64
	Zombie             bool
}

// errNoProc is readStat's error where there is no /proc: nothing is recorded there.
var errNoProc = errors.New("no /proc on this system")

func newProcFile(path string, log *slog.Logger) *procFile {
	return &procFile{path: path, log: log, groups: map[int]procStat{}}
}

// add records the group of the server pid has just started, led by it.
func (f *procFile) add(pid int) {
	if f.path == "" {
		return
	}
	st, err := readStat(pid)
	if err != nil {
		if !errors.Is(err, errNoProc) {
			f.log.Warn("mcp server's process group not recorded: the next start cannot end what it leaves", "pid", pid, "err", err)
		}
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[st.Pgrp] = st
	f.write()
}

// remove forgets the group pgid, which the caller has ended.
func (f *procFile) remove(pgid int) {
	if f.path == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.groups[pgid]; ok {
		delete(f.groups, pgid)
		f.write()
	}
}

// write replaces the file with f.groups; f.mu is held. A failure is logged: the servers
// run on, only the next start could not end what they leave.
func (f *procFile) write() {
	var b strings.Builder
	fmt.Fprintf(&b, "boot %s\n", bootID())
	for _, pgid := range slices.Sorted(maps.Keys(f.groups)) {
		g := f.groups[pgid]
		fmt.Fprintf(&b, "%d %d %d\n", pgid, g.Session, g.Start)
	}
	if err := writeFileAtomic(f.path, []byte(b.String())); err != nil {
		f.log.Warn("mcp servers' process groups not recorded: the next start cannot end what they leave", "err", err)
	}
}

// writeFileAtomic writes data to a temporary file beside path (mode 0600) and renames
// it over path, so that a reader (the next start, after a SIGKILL) sees the old or the
// new file, never half of one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readProcFile parses a file write wrote: its boot id and groups. Lines it cannot parse
// are skipped and counted in bad.
func readProcFile(data []byte) (boot string, groups []procStat, bad int) {
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for first := true; sc.Scan(); first = false {
		line := strings.TrimSpace(sc.Text())
		if first {
			if id, ok := strings.CutPrefix(line, "boot "); ok {
				boot = id
				continue
			}
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			bad++
			continue
		}
		pgid, err1 := strconv.Atoi(f[0])
		sid, err2 := strconv.Atoi(f[1])
		start, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || pgid <= 1 {
			bad++
			continue
		}
		groups = append(groups, procStat{PID: pgid, Pgrp: pgid, Session: sid, Start: start})
	}
	return boot, groups, bad
}

// reap ends the process groups a previous run recorded that still have a process, then
// starts the file afresh for this run. A process is taken for one of a recorded group's
// only if it is in that group and in the leader's session, and started no earlier than
// the leader, in this boot: a pid (and so a group id) is reused only once its group is
// gone, and a new group with the same id would have to be in the same session too.
func (f *procFile) reap() {
	if f.path == "" {
		return
	}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		f.log.Warn("the process groups of a previous run's mcp servers are unknown: what they left runs on", "err", err)
		return
	}
	boot, groups, bad := readProcFile(data)
	if bad > 0 {
		f.log.Warn("unreadable lines in the record of mcp servers' process groups, skipped", "path", f.path, "lines", bad)
	}
	if now := bootID(); len(groups) > 0 && boot == now && now != "" {
		f.kill(groups)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.write()
}

// kill sends SIGKILL to each of groups that still has a process of its own.
func (f *procFile) kill(groups []procStat) {
	procs, err := listProcs()
	if err != nil {
		f.log.Warn("cannot list processes: what a previous run's mcp servers left runs on", "err", err)
		return
	}
	for _, g := range groups {
		n := 0
		for _, p := range procs {
			if p.Pgrp == g.Pgrp && p.Session == g.Session && p.Start >= g.Start && !p.Zombie {
				n++
			}
		}
		if n > 0 {
			killPgid(g.Pgrp)
			f.log.Warn("ended what a previous run's mcp server left running", "pgid", g.Pgrp, "processes", n)
		}
	}
}
