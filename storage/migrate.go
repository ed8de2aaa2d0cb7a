package storage

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/anima-bot/anima/brain"
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
		if err := b.Put(brain.ID64(chat), encodeSent(ids)); err != nil {
			return err
		}
	}
	return nil
}
