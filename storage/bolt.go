package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The bbolt file itself: opening it with the store's options, and reading its meta pages
// to tell whether its freelist is on disk (see Open).

// openBolt opens the bbolt file at path with opts, naming a held lock ErrLocked.
func openBolt(path string, opts Options) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:        opts.LockTimeout,
		ReadOnly:       opts.ReadOnly,
		NoFreelistSync: !opts.SyncFreelist,
		FreelistType:   bolt.FreelistMapType,
		NoSync:         opts.NoSync,
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("open store %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return db, nil
}

// freelistOnDisk reports whether the bbolt file at path has its freelist written, so
// that opening it reads the freelist rather than walking the file. A file that does not
// exist, or that it cannot read, counts as having it (there is nothing to walk, or bbolt
// will say what is wrong). It reads the two meta pages: a 16-byte page header, then
// magic, version, page size, flags, the root bucket (16 bytes), the freelist's page id,
// the high-water page id, the transaction id and a checksum of what precedes it; bbolt
// uses the valid meta with the higher transaction id.
func freelistOnDisk(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 16+64)
	if _, err := f.ReadAt(head, 0); err != nil {
		return true
	}
	pageSize := int64(binary.LittleEndian.Uint32(head[16+8:]))
	const magic, noFreelist = 0xED0CDAED, ^uint64(0)
	best, found, freelist := uint64(0), false, uint64(0)
	for _, off := range []int64{0, pageSize} {
		m := make([]byte, 64)
		if _, err := f.ReadAt(m, off+16); err != nil {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write(m[:56])
		if binary.LittleEndian.Uint32(m) != magic || h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
			continue
		}
		if txid := binary.LittleEndian.Uint64(m[48:]); !found || txid > best {
			best, found, freelist = txid, true, binary.LittleEndian.Uint64(m[32:])
		}
	}
	return !found || freelist != noFreelist
}
