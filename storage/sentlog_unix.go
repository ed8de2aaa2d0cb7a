//go:build unix

package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// sentLogFlags open the sent log without following a symbolic link, and without
// waiting on a FIFO.
const sentLogFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isSymlinkErr reports whether err is an open's refusal to follow a symbolic link.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// trustSentLog returns an error wrapping errSentLogRefused unless st is a regular file
// owned by the process's effective user that group and others cannot write: the file
// anima creates (mode 0600).
func trustSentLog(st fs.FileInfo) error {
	uid := os.Geteuid()
	switch sys, ok := st.Sys().(*syscall.Stat_t); {
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w: not a regular file (%s)", errSentLogRefused, st.Mode().Type())
	case !ok || int(sys.Uid) != uid:
		return fmt.Errorf("%w: not owned by uid %d", errSentLogRefused, uid)
	case st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: writable by group or others (mode %s)", errSentLogRefused, st.Mode().Perm())
	}
	return nil
}
