package storage

import (
	"bytes"
	"encoding/json"

	bolt "go.etcd.io/bbolt"
)

// migrateIndexV3 converts memory's search index from the schema-2 layout (per chat: 's'
// stats, 'd' id → a copy of the turn, 'p' term 0 id → one posting) to the schema-3
// layout (brain/memory/index.go): every indexed turn becomes an unfolded tail entry
// ('t' seq) with an empty value, which memory reads from history and folds in its next
// upkeep; the stats keep only the high-water mark. Turns indexed without a history Seq
// (none since history recorded it) cannot be referred to and are dropped.
func migrateIndexV3(b *bolt.Bucket) error {
	type kv struct{ k, v []byte }
	var old []kv
	if err := b.ForEach(func(k, v []byte) error {
		old = append(old, kv{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}); err != nil {
		return err
	}
	for _, e := range old {
		if err := b.Delete(e.k); err != nil {
			return err
		}
	}
	for _, e := range old {
		if len(e.k) < 9 {
			continue
		}
		chat := e.k[:8]
		switch e.k[8] {
		case 'd':
			var d struct {
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal(e.v, &d) != nil || d.Seq == 0 {
				continue
			}
			if err := b.Put(append(append(bytes.Clone(chat), 't'), U64(d.Seq)...), []byte{}); err != nil {
				return err
			}
		case 's':
			var s struct {
				Through uint64 `json:"through_seq"`
			}
			if json.Unmarshal(e.v, &s) != nil || len(e.k) != 9 {
				continue
			}
			v, err := json.Marshal(map[string]uint64{"docs": 0, "total_len": 0, "through_seq": s.Through})
			if err != nil {
				return err
			}
			if err := b.Put(e.k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
