package mcp

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// ownedBy reports whether process pid's real and effective users are both uid (the
// "Uid:" line of /proc/<pid>/status); false if it cannot be read.
func ownedBy(pid, uid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest) // real, effective, saved, filesystem
			return len(f) >= 2 && f[0] == strconv.Itoa(uid) && f[1] == strconv.Itoa(uid)
		}
	}
	return false
}

// readRecord reads the record at path if it is a regular file (not followed through a
// symlink) of anima's effective user, not writable by group or others, and no larger than
// limit bytes; otherwise its error wraps errRefused and says why. It reads at most
// limit+1 bytes, whatever the file's size.
func readRecord(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO in its place must not hold the start up.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%w: a symbolic link", errRefused)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := trusted(fi, os.Geteuid(), limit); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", errRefused, limit)
	}
	return data, nil
}

// trusted returns an error wrapping errRefused unless fi is a regular file owned by uid,
// not writable by group or others, of at most limit bytes.
func trusted(fi fs.FileInfo, uid int, limit int64) error {
	switch st, ok := fi.Sys().(*syscall.Stat_t); {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: not a regular file (%s)", errRefused, fi.Mode().Type())
	case !ok || int(st.Uid) != uid:
		return fmt.Errorf("%w: not owned by uid %d", errRefused, uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: writable by group or others (mode %s)", errRefused, fi.Mode().Perm())
	case fi.Size() > limit:
		return fmt.Errorf("%w: %d bytes, larger than %d", errRefused, fi.Size(), limit)
	}
	return nil
}
