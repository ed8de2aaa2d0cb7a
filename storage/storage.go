// Package storage keeps all of anima's state in one bbolt file: the inbox of recorded
// signals and the channels' offsets, the outbox, conversation history, relationships,
// acks, and the buckets of memory and schedules. Writes that must happen together (a
// turn's history, its outbox entries and the inbox entries it consumed) share one
// transaction, which is how a crash neither loses nor repeats a message.
package storage

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/anima-bot/anima/brain"
)

// SchemaVersion is the version of the bucket layout this code reads and writes.
// Open upgrades an older file's layouts that are storage's own, in the commit that
// records the new version (migrate.go): version 2 keys facts by chat and user (version 1
// by user alone: those become the user's private-chat facts, migrateFactsV2); version 5
// keeps the ids anima sent in a chat as one list value instead of a key each
// (migrateSentV5), and continues history in epochs of EpochTurns (history.go; the old
// bucket is the first epoch, so nothing moves). Versions 3 and 4 changed memory's search
// index, whose layout only brain/memory knows (3: per-turn tail entries folded into
// segments; 4: the unfolded tail as a mark on the turn's history entry, MarkIndexed):
// Open marks the index owed an upgrade from the file's version (brain.PartIndex,
// owed.go), and memory.New runs those migrations (brain/memory/migrate.go) and settles
// the mark.
const SchemaVersion = 5

// Bucket names. Chat-scoped buckets key every entry with the 8-byte big-endian chat id
// first. Forget relies on that. The buckets of brain/memory and brain/schedule, which the
// store creates and forgets but whose layout they own, are named in brain (layout.go).
const (
	BucketMeta          = "meta"
	BucketInbox         = "inbox"
	BucketOutbox        = "outbox"
	BucketHistory       = "history"       // chat | seq → brain.Turn
	BucketRelationships = "relationships" // chat → brain.Relationship
	BucketAcks          = "acks"          // ack key → brain.Ack
	BucketState         = "state"         // agent-wide state
	BucketSent          = "sent"          // chat → the ids of the last SentKeep messages anima sent (sent.go)
	BucketDead          = "dead"          // chat | user | id → brain.DeadLetter (dead.go)
	BucketVoice         = "voice"         // chat | outbox id → a spoken entry's audio, a blob (voice.go)
)

var (
	chatScoped = []string{BucketHistory, BucketRelationships, brain.BucketSummaries, brain.BucketIndex, brain.BucketSchedules, brain.BucketFires, brain.BucketFacts, BucketSent, BucketDead, BucketVoice}
	allBuckets = []string{BucketMeta, BucketInbox, BucketOutbox, BucketHistory, BucketRelationships,
		BucketAcks, brain.BucketSummaries, brain.BucketIndex, brain.BucketSchedules, brain.BucketFires, brain.BucketFacts, BucketState, BucketSent, BucketDead, BucketVoice}
)

// ErrLocked is returned by Open when another process holds the store.
var ErrLocked = errors.New("store is in use by another process (is anima already running? use `anima backup` for a hot copy)")

// ErrSchema is returned by Open when the file was written by a newer anima.
var ErrSchema = errors.New("unsupported store schema version")

// Options tune Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock (default 500ms).
	LockTimeout time.Duration
	// ReadOnly opens the file without writing (a cold inspection).
	ReadOnly bool
	// SentDelay bounds how long the removal of a delivered outbox entry may wait for the
	// store's next commit to carry it (see MarkSent): the sent log covers a kill in the
	// meantime, only a power loss repeats it; default 2s, negative: never wait.
	SentDelay time.Duration
	// SyncFreelist writes bbolt's freelist in every commit (bbolt's default). Off, the
	// store writes it once, at Close: commits are a page cheaper, and only an open after
	// a crash walks the file to rebuild it (see Open).
	SyncFreelist bool
	// EpochTurns is how many turns a history epoch holds (default EpochTurns; tests use
	// a few to cross epochs).
	EpochTurns int
	// CompactWait bounds how long Compact waits for readers (default 2s; see Compact).
	CompactWait time.Duration
	// NoSync skips the fsync of every commit (bbolt's NoSync). For tests only, whose point
	// is not durability (file sizes, page reuse, compaction cadence): never in production,
	// where a crash or power loss with it set can lose committed transactions or corrupt
	// the file.
	NoSync bool
	// DeadPerUser and DeadPerChat cap the dead letters kept for one user (in every chat)
	// and in one chat: burying one more drops the oldest (default DeadPerUser and
	// DeadPerChat).
	DeadPerUser, DeadPerChat int
	// Logger gets the warnings of Open about the files beside the store it refuses (a
	// sent log it does not trust; see sentlog.go); nil logs nothing.
	Logger *slog.Logger
}

// Store is the bbolt-backed store. Its methods are safe for concurrent use.
type Store struct {
	// mu guards db: every transaction holds it for reading; Compact, which swaps the
	// file, and Close hold it for writing, so transactions wait for them.
	mu   sync.RWMutex
	db   *bolt.DB
	path string
	// freelistAtClose: commits skip the freelist, Close writes it (Options.SyncFreelist).
	freelistAtClose bool
	// noSync: commits are not fsynced (Options.NoSync, tests only).
	noSync      bool
	epochTurns  uint64 // Options.EpochTurns
	compactWait time.Duration

	deadPerUser, deadPerChat int // Options.DeadPerUser, DeadPerChat

	sentDelay time.Duration
	sentMu    sync.Mutex
	sent      map[uint64]bool // delivered outbox entries the next commit removes (MarkSent)
	sentIDs   map[int64][]int // platform message ids a commit is to record (RecordSent)
	sentIDsN  int             // how many ids sentIDs holds
	// forgotten are the chats Forget or ForgetUser deleted since Open: Record checks
	// their reactions against the sent ids (see Record).
	forgotten map[int64]bool
	sentTimer *time.Timer // flushes sent after sentDelay; nil when none waits
	log       sentLog     // <path>.sent: the ids in sent, for a restart after a kill (sentlog.go)
	afterFunc func(time.Duration, func()) *time.Timer
}

// Open opens (creating if needed, mode 0600) the store at path.
//
// Commits do not write bbolt's freelist (NoFreelistSync with the hashmap freelist, as
// etcd runs it): on a store with years of turns the freelist is a page or more per
// commit. Close writes it once, so the next Open reads it instead of walking every page
// of the file to rebuild it — a walk that takes seconds and maps the whole file into
// memory at 100,000 messages. Only the first Open after a crash pays for that walk; it then
// writes the freelist and opens the file again, which unmaps what the walk read, so the
// walk costs time once but no memory.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 500 * time.Millisecond
	}
	if dir := filepath.Dir(path); dir != "" && !opts.ReadOnly {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create store directory %s: %w", dir, err)
		}
	}
	walked := !opts.ReadOnly && !freelistOnDisk(path)
	db, err := openBolt(path, opts)
	if err != nil {
		return nil, err
	}
	if !opts.ReadOnly {
		// A compaction's copy left by a crash (we hold the file lock, so no compaction
		// runs): the store at path is whole, as the copy is renamed over it only once
		// complete, and the erasure it was for is still pending in it.
		if err := os.Remove(path + ".compact"); err != nil && !errors.Is(err, os.ErrNotExist) {
			_ = db.Close()
			return nil, fmt.Errorf("open store %s: remove a crashed compaction's copy: %w", path, err)
		}
		// So is a backup's copy, which is unlinked once written.
		if err := removeSnapshots(path); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open store %s: remove a crashed backup's copy: %w", path, err)
		}
	}
	if walked {
		// bbolt rebuilt the freelist by reading every page (after a crash): write it,
		// and open again to drop the pages the walk mapped in.
		err := db.Update(func(*bolt.Tx) error {
			db.NoFreelistSync = false
			return nil
		})
		if err = errors.Join(err, db.Close()); err != nil {
			return nil, fmt.Errorf("open store %s: write freelist: %w", path, err)
		}
		if db, err = openBolt(path, opts); err != nil {
			return nil, err
		}
	}
	if opts.SentDelay == 0 {
		opts.SentDelay = 2 * time.Second
	}
	if opts.CompactWait <= 0 {
		opts.CompactWait = compactWait
	}
	s := &Store{db: db, path: path, freelistAtClose: !opts.SyncFreelist && !opts.ReadOnly, noSync: opts.NoSync, epochTurns: EpochTurns, compactWait: opts.CompactWait,
		sentDelay: opts.SentDelay, sent: map[uint64]bool{}, sentIDs: map[int64][]int{}, forgotten: map[int64]bool{}, afterFunc: time.AfterFunc}
	if opts.EpochTurns > 0 {
		s.epochTurns = uint64(opts.EpochTurns)
	}
	s.deadPerUser, s.deadPerChat = cmp.Or(max(opts.DeadPerUser, 0), DeadPerUser), cmp.Or(max(opts.DeadPerChat, 0), DeadPerChat)
	s.log.path, s.log.logger = path+sentLogSuffix, opts.Logger
	if opts.ReadOnly {
		if err := s.replaySentLog(true); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		return s, nil
	}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.replaySentLog(false); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) init() error {
	// Most opens find everything in place: no commit then (it would write and sync a
	// meta page, and drop the freelist Close wrote).
	current := false
	_ = s.db.View(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if tx.Bucket([]byte(name)) == nil {
				return nil
			}
		}
		current = string(tx.Bucket([]byte(BucketMeta)).Get([]byte("schema"))) == strconv.Itoa(SchemaVersion)
		return nil
	})
	if current {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket([]byte(BucketMeta))
		v := meta.Get([]byte("schema"))
		if v == nil {
			return meta.Put([]byte("schema"), []byte(strconv.Itoa(SchemaVersion)))
		}
		n, err := strconv.Atoi(string(v))
		if err != nil || n > SchemaVersion {
			return fmt.Errorf("%w: file has %q, this anima reads %d", ErrSchema, v, SchemaVersion)
		}
		if n == SchemaVersion {
			return nil
		}
		if n < 2 {
			if err := migrateFactsV2(tx.Bucket([]byte(brain.BucketFacts))); err != nil {
				return fmt.Errorf("migrate facts to schema 2: %w", err)
			}
		}
		if err := owe(meta, n); err != nil {
			return err
		}
		if n < 5 {
			if err := migrateSentV5(tx.Bucket([]byte(BucketSent))); err != nil {
				return fmt.Errorf("migrate sent ids to schema 5: %w", err)
			}
		}
		return meta.Put([]byte("schema"), []byte(strconv.Itoa(SchemaVersion)))
	})
}

// Path returns the file the store lives in.
func (s *Store) Path() string { return s.path }

// Close writes the freelist (see Open) and closes the file. It is safe to call more
// than once.
func (s *Store) Close() error {
	s.sentMu.Lock()
	if s.sentTimer != nil {
		s.sentTimer.Stop()
		s.sentTimer = nil
	}
	waiting := (len(s.sent) > 0 || s.sentIDsN > 0) && !s.db.IsReadOnly() // read-only: the sent log's marks
	s.sentMu.Unlock()
	if s.freelistAtClose || waiting {
		// One last commit: the delivered outbox entries still waiting (MarkSent), and
		// the freelist (set inside the write transaction, whose lock orders it with
		// every other commit).
		err := s.update(true, func(*Tx) error {
			if s.freelistAtClose {
				s.db.NoFreelistSync = false
			}
			return nil
		})
		if err != nil && !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
			s.mu.Lock()
			_ = s.db.Close()
			s.mu.Unlock()
			return fmt.Errorf("close store %s: write freelist: %w", s.path, err)
		}
	}
	// The last commit removed every entry the sent log names: it is no longer needed.
	s.sentMu.Lock()
	logErr := s.log.close(len(s.sent) == 0 && !s.db.IsReadOnly())
	s.sentMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	if logErr != nil {
		return fmt.Errorf("close store %s: sent log: %w", s.path, logErr)
	}
	return nil
}

// Ping reports whether the store is open and readable.
func (s *Store) Ping() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte(BucketMeta)) == nil {
			return errors.New("store has no meta bucket")
		}
		return nil
	})
}

// Update runs fn in a read-write transaction (committed, and synced to disk, if fn
// returns nil). The commit also removes the delivered outbox entries waiting for one
// (MarkSent).
func (s *Store) Update(fn func(tx *Tx) error) error { return s.update(false, fn) }

// update is Update; all makes it write every sent id waiting (RecordSent), not only a
// full batch.
func (s *Store) update(all bool, fn func(tx *Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.Update(func(btx *bolt.Tx) error {
		tx := s.newTx(btx)
		if err := fn(tx); err != nil {
			return err
		}
		return s.carrySent(tx, all)
	})
}

// View runs fn in a read-only transaction.
func (s *Store) View(fn func(tx *Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.View(func(tx *bolt.Tx) error { return fn(s.newTx(tx)) })
}

// Put stores v as JSON under key in its own transaction.
func (s *Store) Put(bucket string, key []byte, v any) error {
	return s.Update(func(tx *Tx) error { return tx.Put(bucket, key, v) })
}

// Get decodes the JSON under key into v.
func (s *Store) Get(bucket string, key []byte, v any) (found bool, err error) {
	err = s.View(func(tx *Tx) error {
		found, err = tx.Get(bucket, key, v)
		return err
	})
	return found, err
}
