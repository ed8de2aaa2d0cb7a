package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"
)

// The sent log, <store>.sent, closes the gap MarkSent leaves when it lets the next commit
// remove the last delivered outbox entry: before leaving it, MarkSent appends the entry's
// id to the log with one write(2), not synced. A killed process's writes are in the
// kernel's page cache, which outlives it, so the next Open finds the id and removes the
// entry instead of sending it again: a kill repeats only a reply whose send had returned
// but whose id was not yet written — microseconds. A power loss (or a kernel crash) loses
// what the kernel had not yet written back (dirty pages live up to about 30 s by
// default), so it repeats the replies delivered in the last Options.SentDelay (when the
// flush commit makes the removal durable), or since the last commit if that came
// sooner: what a kill repeated before the log.
//
// A record is an id and its complement, 8 bytes big-endian each, so that a tail of zeros
// or garbage (a file extended but not written when the power went) matches no id.
// Outbox ids come from the bucket's sequence and are never reused (compaction keeps the
// sequence), so a record whose entry is gone is harmless. The log is cut to nothing once
// every id in it has been committed, when it has grown to sentLogTrim, and removed at
// Open (after replaying it) and at Close.
//
// The log's bound: every commit carries every mark waiting (carrySent) and cuts the log
// once it has reached sentLogTrim, so after a commit it holds less than sentLogTrim; and
// between two commits MarkSent appends only the id of the outbox's last entry (a new
// entry comes only with a commit), so in use the log never passes sentLogTrim
// (TestSentLogStaysSmall). Open reads no more than sentLogMax of it — 16 times that, for
// marks repeated and cuts that failed — and only its end, where the marks not yet
// committed are: the log is appended to, and cut only to nothing.
//
// The data folder is not taken on trust: a log that is not a regular file of the
// store's user that group and others cannot write (a symbolic link, a FIFO, another
// user's file, one anyone may write) is not read, and Open moves it aside to
// <store>.sent.bad-<unix seconds> with a warning; a log longer than sentLogMax is read
// only for its last sentLogMax bytes and moved aside too, once replayed. Not reading a
// log loses nothing (an entry it named stays in the outbox) and repeats at most what
// losing the log in a power loss would: the one message delivered before the kill whose
// removal was not yet committed. Reading a planted one would drop undelivered messages.
const (
	sentLogSuffix = ".sent"
	sentLogRecord = 16
	sentLogTrim   = 4096 // a page: 256 records
	sentLogMax    = 16 * sentLogTrim
)

// errSentLogRefused wraps why Open would not read a sent log.
var errSentLogRefused = errors.New("sent log refused")

// sentLog is the open sent log; the Store's sentMu guards it.
type sentLog struct {
	path string
	f    *os.File // opened at the first append; nil before and after Close
	size int64
	// broken: an append failed and could not be undone, or the file at path is not one
	// to write to; MarkSent commits each removal.
	broken bool
	logger *slog.Logger // Options.Logger; nil logs nothing
}

// append writes id to the log. On an error the log is as it was, or broken.
func (l *sentLog) append(id uint64) error {
	if l.broken {
		return errors.New("sent log unusable after an earlier error")
	}
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|sentLogFlags, 0o600)
		if err != nil {
			return fmt.Errorf("open sent log: %w", err)
		}
		st, err := f.Stat()
		if err == nil {
			err = trustSentLog(st)
		}
		if err != nil {
			_ = f.Close()
			l.broken = l.broken || errors.Is(err, errSentLogRefused)
			return fmt.Errorf("open sent log: %w", err)
		}
		l.f, l.size = f, st.Size()
	}
	var rec [sentLogRecord]byte
	binary.BigEndian.PutUint64(rec[:8], id)
	binary.BigEndian.PutUint64(rec[8:], ^id)
	if _, err := l.f.Write(rec[:]); err != nil {
		// A short write would shift every later record: cut it off, or stop using the log.
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = true
		}
		return fmt.Errorf("append to sent log: %w", err)
	}
	l.size += sentLogRecord
	return nil
}

// committed is called once every id in the log has been removed in a commit: it cuts
// the log once it has grown to sentLogTrim.
func (l *sentLog) committed() {
	if l.f == nil || l.size < sentLogTrim {
		return
	}
	if err := l.f.Truncate(0); err != nil {
		return // the records are stale, not wrong: try again at the next
	}
	l.size = 0
}

// close closes the log and, if remove, deletes it.
func (l *sentLog) close(remove bool) error {
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f = nil
	}
	if remove {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// readSentLog returns the ids in the last sentLogMax bytes of the log at path, skipping
// records that do not check, and whether that was the whole log. A log trustSentLog
// refuses is not read: the error wraps errSentLogRefused.
func readSentLog(path string) (ids []uint64, whole bool, err error) {
	// sentLogFlags: a symbolic link is refused, and a FIFO does not hold Open up.
	f, err := os.OpenFile(path, os.O_RDONLY|sentLogFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if isSymlinkErr(err) {
		return nil, false, fmt.Errorf("%w: a symbolic link", errSentLogRefused)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read sent log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil {
		err = trustSentLog(st)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read sent log: %w", err)
	}
	// Records start at multiples of sentLogRecord: the log is cut only to nothing.
	off := max(st.Size()-sentLogMax, 0)
	off = (off + sentLogRecord - 1) / sentLogRecord * sentLogRecord
	raw, err := io.ReadAll(io.NewSectionReader(f, off, sentLogMax))
	if err != nil {
		return nil, false, fmt.Errorf("read sent log: %w", err)
	}
	for ; len(raw) >= sentLogRecord; raw = raw[sentLogRecord:] {
		id := binary.BigEndian.Uint64(raw)
		if binary.BigEndian.Uint64(raw[8:]) == ^id {
			ids = append(ids, id)
		}
	}
	return ids, off == 0, nil
}

// replaySentLog, at Open, marks sent the outbox entries the log names (delivered before
// a crash) and, unless the store is read-only, commits their removal and deletes the log
// (or moves it aside, if it was longer than sentLogMax). A log readSentLog refuses is
// moved aside unread, or left where it is if the store is read-only.
func (s *Store) replaySentLog(readOnly bool) error {
	ids, whole, err := readSentLog(s.log.path)
	if errors.Is(err, errSentLogRefused) {
		s.log.refuse(err, readOnly)
		return nil
	}
	if err != nil {
		return err
	}
	const long = "sent log longer than it can grow: only its last bytes were read"
	if !whole && readOnly {
		s.log.warn(long, "path", s.log.path, "read_bytes", sentLogMax)
	}
	if len(ids) > 0 {
		s.sentMu.Lock()
		for _, id := range ids {
			s.sent[id] = true
		}
		s.sentMu.Unlock()
		if readOnly {
			return nil
		}
		if err := s.update(false, func(*Tx) error { return nil }); err != nil {
			return fmt.Errorf("remove outbox entries the sent log names: %w", err)
		}
	}
	if readOnly {
		return nil
	}
	if !whole && s.log.moveAside(long+", and it is moved aside once replayed", "read_bytes", sentLogMax) {
		return nil
	}
	return s.log.close(true) // replayed, or empty or all garbage
}

// refuse warns that the log at l.path, which err says why, is not read and, unless
// readOnly, moves it aside; if it cannot, nothing is appended to it (broken).
func (l *sentLog) refuse(err error, readOnly bool) {
	if readOnly {
		l.warn("sent log refused, not read: entries it names are taken as not yet delivered", "path", l.path, "reason", err)
		return
	}
	if !l.moveAside("sent log refused, not read, and moved aside: entries it names are taken as not yet delivered", "reason", err) {
		l.broken = true
	}
}

// moveAside renames the log to <path>.bad-<unix seconds> and warns msg with args; it
// reports whether the log was moved (a failure is warned too).
func (l *sentLog) moveAside(msg string, args ...any) bool {
	aside := fmt.Sprintf("%s.bad-%d", l.path, time.Now().Unix())
	if err := os.Rename(l.path, aside); err != nil {
		l.warn(msg+"; it could not be moved aside, and each delivered message's removal is committed at once",
			append(args, "path", l.path, "err", err)...)
		return false
	}
	l.warn(msg, append(args, "path", l.path, "moved_to", aside)...)
	return true
}

func (l *sentLog) warn(msg string, args ...any) {
	if l.logger != nil {
		l.logger.Warn(msg, append([]any{"component", "storage"}, args...)...)
	}
}
