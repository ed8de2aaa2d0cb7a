package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
const (
	sentLogSuffix = ".sent"
	sentLogRecord = 16
	sentLogTrim   = 4096 // a page: 256 records
)

// sentLog is the open sent log; the Store's sentMu guards it.
type sentLog struct {
	path string
	f    *os.File // opened at the first append; nil before and after Close
	size int64
	// broken: an append failed and could not be undone; MarkSent commits each removal.
	broken bool
}

// append writes id to the log. On an error the log is as it was, or broken.
func (l *sentLog) append(id uint64) error {
	if l.broken {
		return errors.New("sent log unusable after an earlier error")
	}
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open sent log: %w", err)
		}
		st, err := f.Stat()
		if err != nil {
			_ = f.Close()
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

// readSentLog returns the ids the log at path holds, skipping records that do not check.
func readSentLog(path string) ([]uint64, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sent log: %w", err)
	}
	var ids []uint64
	for ; len(raw) >= sentLogRecord; raw = raw[sentLogRecord:] {
		id := binary.BigEndian.Uint64(raw)
		if binary.BigEndian.Uint64(raw[8:]) == ^id {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// replaySentLog, at Open, marks sent the outbox entries the log names (delivered before
// a crash) and, unless the store is read-only, commits their removal and deletes the log.
func (s *Store) replaySentLog(readOnly bool) error {
	ids, err := readSentLog(s.log.path)
	if err != nil || len(ids) == 0 {
		if err == nil && !readOnly {
			err = s.log.close(true) // an empty or all-garbage log
		}
		return err
	}
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
	return s.log.close(true)
}
