package storage

import (
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
)

// A part is a region of the file whose layout another package owns: memory's search
// index (brain.PartIndex). Open upgrades storage's own layouts itself, but not a part's:
// when it upgrades a file from a schema older than the part's last change, it records, in the
// commit that records the new schema, that the part is owed an upgrade from the file's
// old schema. The owner runs that upgrade and settles it (Owed, Settle) before it reads
// or writes the part; until then the mark stays, whatever else opens the file.

// partChanged is the last schema that changed each part's layout.
var partChanged = map[string]int{brain.PartIndex: 4}

// OwedKey is the meta key of part's owed upgrade; its value is the schema the part is
// in, in decimal.
func OwedKey(part string) []byte { return []byte("owed_" + part) }

// owe marks in meta the parts whose layout changed after schema from as owed an upgrade
// from it.
func owe(meta *bolt.Bucket, from int) error {
	for part, changed := range partChanged {
		if from >= changed {
			continue
		}
		if err := meta.Put(OwedKey(part), []byte(strconv.Itoa(from))); err != nil {
			return fmt.Errorf("mark %s owed an upgrade: %w", part, err)
		}
	}
	return nil
}

// Owed reports whether part is owed an upgrade and from which schema (the one the file
// had when Open upgraded it).
func (t *Tx) Owed(part string) (from int, ok bool, err error) {
	b, err := t.bucket(BucketMeta)
	if err != nil {
		return 0, false, err
	}
	return ReadOwed(part, b.Get(OwedKey(part)))
}

// ReadOwed reads part's owed-upgrade mark v (the value under OwedKey; nil: none owed).
func ReadOwed(part string, v []byte) (from int, ok bool, err error) {
	if v == nil {
		return 0, false, nil
	}
	if from, err = strconv.Atoi(string(v)); err != nil {
		return 0, false, fmt.Errorf("owed upgrade of %s: schema %q: %w", part, v, err)
	}
	return from, true, nil
}

// Settle records that part's owed upgrade is done, when the transaction commits.
func (t *Tx) Settle(part string) error {
	b, err := t.bucket(BucketMeta)
	if err != nil {
		return err
	}
	return b.Delete(OwedKey(part))
}
