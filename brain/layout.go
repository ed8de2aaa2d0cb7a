package brain

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// The store's layout that the store (package storage) and the engines keeping data in it
// (brain/memory, brain/schedule) both need: the names of those engines' buckets, the key
// encoders, the end of a scan, the history entry's index mark and the part whose upgrade
// memory runs. It lives in the vocabulary so that arrows point down: storage serialises
// it, the engines read and write through their own small Tx interfaces, and neither
// imports the other (bot, which imports both, checks that *storage.Tx satisfies them).

// Buckets of brain/memory and brain/schedule. They are chat-scoped: every key starts with
// the 8-byte big-endian chat id, which is how a chat's /forget deletes them.
const (
	BucketSummaries = "summaries" // chat → memory summary
	BucketIndex     = "index"     // chat | tag | … → memory search (brain/memory/index.go)
	BucketFacts     = "facts"     // chat | user | attribute → Fact (FactKey)
	BucketSchedules = "schedules" // chat | id → ScheduleItem (ScheduleKey)
	BucketFires     = "fires"     // chat | id | due → fire record (brain/schedule/fire.go)
)

// PartIndex is memory's search index (BucketIndex, brain/memory/migrate.go): a part of the
// store whose layout memory owns and upgrades when the store says it is owed one (its
// layout changed at store schemas 3 and 4; see storage's owed.go).
const PartIndex = "index"

// ErrStop, returned by a scan's callback, ends the scan without error.
var ErrStop = errors.New("stop scan")

// U64 encodes v big-endian, so keys sort numerically.
func U64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// ID64 encodes a (possibly negative) chat or user id as an 8-byte key prefix.
func ID64(id int64) []byte { return U64(uint64(id)) }

// Key joins an id prefix and further parts into one key.
func Key(id int64, parts ...[]byte) []byte {
	k := ID64(id)
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

// FactKey is the key of a fact: the chat it was told in, the user it is about, the
// attribute. A private chat's facts (chat = user) are the user's private facts.
func FactKey(chat, user int64, attr string) []byte { return Key(chat, ID64(user), []byte(attr)) }

// ScheduleKey is the key of a schedule item: its chat and id. The item's fire records are
// keyed under it (chat | id | due).
func ScheduleKey(chat int64, id string) []byte { return Key(chat, []byte(id)) }

// HistorySeq returns the Seq of a history key (chat | seq).
func HistorySeq(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-8:]) }

// IndexedTurn is a history entry as the store keeps it: the turn, with memory's mark "ix"
// set once the turn is in the search index (brain/memory/index.go). Readers that decode
// a Turn ignore the mark.
type IndexedTurn struct {
	Turn
	Indexed bool `json:"ix,omitempty"`
}

// DecodeHistory decodes a history entry and reports whether it is marked indexed.
func DecodeHistory(v []byte) (Turn, bool, error) {
	var e IndexedTurn
	if err := json.Unmarshal(v, &e); err != nil {
		return Turn{}, false, fmt.Errorf("decode history entry: %w", err)
	}
	return e.Turn, e.Indexed, nil
}
