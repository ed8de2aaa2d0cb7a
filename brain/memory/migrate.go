package memory

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/anima-bot/anima/brain"
)

// The index's layout changed at store schemas 3 and 4. storage.Open upgrades its own
// layouts but only marks the index owed an upgrade from the file's old schema
// (brain.PartIndex); New runs the migrations below and settles the mark before the
// Memory reads or writes the index.

// upgrade runs the index migrations the store owes, in one transaction, and settles them.
// A store that owes none costs one read transaction. It returns the schema the index was
// upgraded from (0: none).
func upgrade(st txns) (int, error) {
	var owed bool
	err := st.View(func(tx Tx) error {
		var err error
		_, owed, err = tx.Owed(brain.PartIndex)
		return err
	})
	if err != nil || !owed {
		return 0, err
	}
	var from int
	err = st.Update(func(tx Tx) error {
		var err error
		if from, owed, err = tx.Owed(brain.PartIndex); err != nil || !owed {
			return err
		}
		if from < 3 {
			if err := migrateIndexV3(tx); err != nil {
				return fmt.Errorf("migrate search index to schema 3: %w", err)
			}
		}
		if from < 4 {
			if err := migrateIndexV4(tx); err != nil {
				return fmt.Errorf("migrate search index to schema 4: %w", err)
			}
		}
		return tx.Settle(brain.PartIndex)
	})
	return from, err
}

// kv is one key and value of the index, copied out of the transaction.
type kv struct{ k, v []byte }

// snapshot copies every key and value of the index, so a migration can delete and
// rewrite keys while it walks them.
func snapshot(tx Tx) ([]kv, error) {
	var all []kv
	err := tx.Scan(brain.BucketIndex, nil, func(k, v []byte) error {
		all = append(all, kv{bytes.Clone(k), bytes.Clone(v)})
		return nil
	})
	return all, err
}

// migrateIndexV3 converts the search index from the schema-2 layout (per chat: 's'
// stats, 'd' id → a copy of the turn, 'p' term 0 id → one posting) to the schema-3
// layout: every indexed turn becomes an unfolded tail entry ('t' seq) with an empty
// value, which migrateIndexV4 turns into a mark on its history entry; the stats keep
// only the high-water mark. Turns indexed without a history Seq (none since history
// recorded it) cannot be referred to and are dropped.
func migrateIndexV3(tx Tx) error {
	old, err := snapshot(tx)
	if err != nil {
		return err
	}
	for _, e := range old {
		if err := tx.Delete(brain.BucketIndex, e.k); err != nil {
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
			if err := tx.PutRaw(brain.BucketIndex, append(append(bytes.Clone(chat), 't'), brain.U64(d.Seq)...), []byte{}); err != nil {
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
			if err := tx.PutRaw(brain.BucketIndex, e.k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrateIndexV4 moves the unfolded tail of the search index into history: every
// schema-3 tail entry (chat 't' seq) becomes the mark on its turn's history entry
// (MarkIndexed), and the entry is deleted. The tail is now read after the stats' folded
// high-water mark, so where a chat's tail starts at or below it (the schema-3 migration
// kept the old high-water mark, with nothing folded yet) the mark moves to just before
// the tail. Segments stay as they are.
func migrateIndexV4(tx Tx) error {
	var tail [][]byte
	if err := tx.Scan(brain.BucketIndex, nil, func(k, _ []byte) error {
		if len(k) == 17 && k[8] == 't' {
			tail = append(tail, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	first := map[int64]uint64{} // chat → its lowest tail seq
	for _, k := range tail {
		chat, seq := int64(binary.BigEndian.Uint64(k[:8])), binary.BigEndian.Uint64(k[9:])
		if f, ok := first[chat]; !ok || seq < f {
			first[chat] = seq
		}
		if _, err := tx.MarkIndexed(chat, seq); err != nil {
			return err
		}
		if err := tx.Delete(brain.BucketIndex, k); err != nil {
			return err
		}
	}
	for chat, seq := range first {
		k := statsKey(chat)
		v, err := tx.GetRaw(brain.BucketIndex, k)
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		var st map[string]json.RawMessage
		var through uint64
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("decode index stats of chat %d: %w", chat, err)
		}
		if raw, ok := st["through_seq"]; ok {
			if err := json.Unmarshal(raw, &through); err != nil {
				return fmt.Errorf("decode index stats of chat %d: %w", chat, err)
			}
		}
		if through < seq {
			continue
		}
		st["through_seq"] = json.RawMessage(strconv.FormatUint(seq-1, 10))
		nv, err := json.Marshal(st)
		if err != nil {
			return err
		}
		if err := tx.PutRaw(brain.BucketIndex, k, nv); err != nil {
			return err
		}
	}
	return nil
}
