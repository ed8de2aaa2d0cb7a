package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// kv is one key and value of a bucket, copied out of the transaction's pages.
type kv struct{ k, v []byte }

// snapshot copies every key and value of b, so a migration can delete and rewrite keys
// while it walks them (bbolt's cursor must not see the bucket change under it).
func snapshot(b *bolt.Bucket) ([]kv, error) {
	var all []kv
	err := b.ForEach(func(k, v []byte) error {
		all = append(all, kv{bytes.Clone(k), bytes.Clone(v)})
		return nil
	})
	return all, err
}

// migrateFactsV2 rekeys schema-1 facts (user | attribute) as the user's private-chat facts
// (user | user | attribute), in the caller's transaction.
func migrateFactsV2(b *bolt.Bucket) error {
	old, err := snapshot(b)
	if err != nil {
		return err
	}
	for _, e := range old {
		if len(e.k) < 8 {
			continue
		}
		if err := b.Delete(e.k); err != nil {
			return err
		}
		nk := append(bytes.Clone(e.k[:8]), e.k...)
		if err := b.Put(nk, e.v); err != nil {
			return err
		}
	}
	return nil
}

// migrateIndexV3 converts memory's search index from the schema-2 layout (per chat: 's'
// stats, 'd' id → a copy of the turn, 'p' term 0 id → one posting) to the schema-3
// layout (brain/memory/index.go): every indexed turn becomes an unfolded tail entry
// ('t' seq) with an empty value, which memory reads from history and folds in its next
// upkeep; the stats keep only the high-water mark. Turns indexed without a history Seq
// (none since history recorded it) cannot be referred to and are dropped.
func migrateIndexV3(b *bolt.Bucket) error {
	old, err := snapshot(b)
	if err != nil {
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

// migrateIndexV4 moves the unfolded tail of memory's search index into history: every
// schema-3 tail entry (chat 't' seq) becomes the mark on its turn's history entry
// (MarkIndexed), and the entry is deleted. The tail is now read after the stats' folded
// high-water mark, so where a chat's tail starts at or below it (the schema-3 migration
// kept the old high-water mark, with nothing folded yet) the mark moves to just before
// the tail. Segments stay as they are.
func migrateIndexV4(tx *Tx) error {
	b, err := tx.bucket(BucketIndex)
	if err != nil {
		return err
	}
	var tail [][]byte
	if err := b.ForEach(func(k, _ []byte) error {
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
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	for chat, seq := range first {
		k := Key(chat, []byte{'s'})
		v := b.Get(k)
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
		if err := b.Put(k, nv); err != nil {
			return err
		}
	}
	return nil
}

// migrateSentV5 turns the schema-4 sent ids (a key chat | id each) into one list per chat
// (encodeSent), oldest first, keeping the latest SentKeep.
func migrateSentV5(b *bolt.Bucket) error {
	old, err := snapshot(b)
	if err != nil {
		return err
	}
	lists := map[int64][]int{}
	var chats []int64
	for _, e := range old {
		if len(e.k) != 16 {
			continue
		}
		chat := int64(binary.BigEndian.Uint64(e.k[:8]))
		if _, ok := lists[chat]; !ok {
			chats = append(chats, chat)
		}
		lists[chat] = append(lists[chat], int(binary.BigEndian.Uint64(e.k[8:])))
		if err := b.Delete(e.k); err != nil {
			return err
		}
	}
	for _, chat := range chats {
		ids := lists[chat]
		ids = ids[max(len(ids)-SentKeep, 0):]
		if err := b.Put(ID64(chat), encodeSent(ids)); err != nil {
			return err
		}
	}
	return nil
}
