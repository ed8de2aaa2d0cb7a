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
	"time"
)

// procFile records the process groups of the stdio servers this run started, in a file
// beside the store (Options.Pids), so that the next start ends what they left when anima
// was killed with SIGKILL: the server itself dies with anima (dieWithParent), the
// processes it started (npx's node, a shell's jobs) stay in its group until reap. A
// process that left the group (setsid) is beyond it: only a cgroup (systemd's
// KillMode=control-group) ends that one. Only Linux records: it needs /proc.
//
// The file is "boot <boot id>" and then one "<pgid> <session> <start>" line per group, of
// its leader when it started; written whole to a temporary file (mode 0600) and renamed.
//
// The data folder is not taken on trust: a start with no MCP server configured does not
// read the file, and one that does reads it only if it is a regular file of anima's own
// user that no one else may write, no larger than pidsFileMax (readRecord); a file that
// fails is named in a warning and moved aside to <file>.bad-<unix seconds>, for the
// operator to look at, and the run records afresh. Of what the file names, kill ends
// only the groups whose every process is one the recorded server can have started.
type procFile struct {
	path    string // "" records nothing (anima mcp list)
	log     *slog.Logger
	servers int // how many servers are configured: with none, reap reads nothing

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

func newProcFile(path string, log *slog.Logger, servers int) *procFile {
	return &procFile{path: path, log: log, servers: servers, groups: map[int]procStat{}}
}

// The record holds a boot line and a line per stdio server running at once, so it is
// bounded by how many servers a run may have: pidsFileMax(n) is a boot line (a boot id
// is a 36-character UUID) and a longest record line (pids are at most 4194304, pid_max's
// ceiling; a start time is a uint64) for each of n servers, or of pidsGroupsMin when
// fewer are configured now, as the previous run may have had more: 9.5 KB.
const (
	pidsBootLineMax = len("boot \n") + 36
	pidsLineMax     = len("4194304 4194304 18446744073709551615\n")
	pidsGroupsMin   = 256
)

func pidsFileMax(servers int) int64 {
	return int64(pidsBootLineMax + max(servers, pidsGroupsMin)*pidsLineMax)
}

// errRefused wraps why readRecord would not read a record: what is wrong with the file.
var errRefused = errors.New("refused")

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
// starts the file afresh for this run. With no server configured it neither reads nor
// writes the file. A group is ended only if every process left in it is one the
// recorded leader's server can have started (see kill): a pid, and so a group id, is
// reused only once its group is gone, and a new group with the same id would have to be
// in the same session, of the same user, and its leader not alive with another start.
func (f *procFile) reap() {
	if f.path == "" {
		return
	}
	if f.servers == 0 {
		if _, err := os.Lstat(f.path); err == nil {
			f.log.Info("no mcp server configured: the record of a previous run's servers' process groups is not read", "path", f.path)
		}
		return
	}
	data, err := readRecord(f.path, pidsFileMax(f.servers))
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNoProc):
		return
	case errors.Is(err, errRefused):
		aside := fmt.Sprintf("%s.bad-%d", f.path, time.Now().Unix())
		if rerr := os.Rename(f.path, aside); rerr != nil {
			f.log.Warn("the record of a previous run's mcp servers' process groups is refused, not read: what they left runs on; it could not be moved aside",
				"path", f.path, "reason", err, "err", rerr)
		} else {
			f.log.Warn("the record of a previous run's mcp servers' process groups is refused, not read, and moved aside: what they left runs on",
				"path", f.path, "reason", err, "moved_to", aside)
		}
	case err != nil:
		f.log.Warn("the process groups of a previous run's mcp servers are unknown: what they left runs on", "path", f.path, "err", err)
		return
	default:
		boot, groups, bad := readProcFile(data)
		if bad > 0 {
			f.log.Warn("unreadable lines in the record of mcp servers' process groups, skipped", "path", f.path, "lines", bad)
		}
		if now := bootID(); len(groups) > 0 && boot == now && now != "" {
			f.kill(groups)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.write()
}

// kill sends SIGKILL to each of groups that still has a process, if every process in it
// (zombies aside) is one the recorded server can have started: in its session, of
// anima's user, started no earlier than the leader; and if the leader is still there
// (alive or a zombie), with the start time recorded. A group recorded with no start time
// (0: no process of a run's has it) is never ended.
func (f *procFile) kill(groups []procStat) {
	procs, err := listProcs()
	if err != nil {
		f.log.Warn("cannot list processes: what a previous run's mcp servers left runs on", "err", err)
		return
	}
	uid := os.Geteuid()
	for _, g := range groups {
		if g.Start == 0 {
			f.log.Warn("a recorded mcp server's process group has no start time: not ended", "path", f.path, "pgid", g.Pgrp)
			continue
		}
		n, ours := 0, true // processes left in the group; whether all can be the server's
		for _, p := range procs {
			if p.PID == g.Pgrp && p.Start != g.Start {
				ours = false // the pid names another process now
			}
			if p.Pgrp != g.Pgrp || p.Zombie {
				continue
			}
			n++
			if p.Session != g.Session || p.Start < g.Start || !ownedBy(p.PID, uid) {
				ours = false
			}
		}
		if !ours {
			if n > 0 {
				f.log.Warn("a recorded mcp server's process group holds processes it cannot have started: not ended", "path", f.path, "pgid", g.Pgrp)
			}
			continue
		}
		if n > 0 {
			killPgid(g.Pgrp)
			f.log.Warn("ended what a previous run's mcp server left running", "pgid", g.Pgrp, "processes", n)
		}
	}
}
