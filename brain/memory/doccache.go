package memory

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// docCacheBytes bounds the decoded docs tables kept between searches: 4 MiB holds the
// tables of about 260,000 folded turns.
const docCacheBytes = 4 << 20

// docCache keeps decoded segment docs tables, least recently used out first. A long
// chat's Recall scores every segment a query term is in, and decoding their docs tables
// (a varint pair per turn) was most of its time. Tables are keyed by a hash of their
// encoded bytes, so a segment rewritten in place (a user forgotten) or a new one under an
// old id (a chat forgotten) never meets a stale table.
type docCache struct {
	seed maphash.Seed

	mu    sync.Mutex
	max   int
	bytes int
	order *list.List // of *docEntry, most recent first
	byKey map[docKey]*list.Element
}

type docKey struct {
	n    int // encoded length
	hash uint64
}

type docEntry struct {
	key  docKey
	docs []segDoc
}

func newDocCache(maxBytes int) *docCache {
	return &docCache{seed: maphash.MakeSeed(), max: maxBytes, order: list.New(), byKey: map[docKey]*list.Element{}}
}

// table returns seg's decoded docs table, from the cache when it is there. The table is
// shared: callers must not modify it.
func (c *docCache) table(seg segment) ([]segDoc, error) {
	key := docKey{n: len(seg.docs), hash: maphash.Bytes(c.seed, seg.docs)}
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		docs := e.Value.(*docEntry).docs
		c.mu.Unlock()
		return docs, nil
	}
	c.mu.Unlock()
	docs, err := seg.docTable()
	if err != nil {
		return nil, err
	}
	size := docSize * len(docs)
	if size > c.max {
		return docs, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return docs, nil // decoded meanwhile by another search
	}
	c.byKey[key] = c.order.PushFront(&docEntry{key: key, docs: docs})
	c.bytes += size
	for c.bytes > c.max {
		old := c.order.Remove(c.order.Back()).(*docEntry)
		delete(c.byKey, old.key)
		c.bytes -= docSize * len(old.docs)
	}
	return docs, nil
}

// docSize is the memory of one decoded doc (segDoc).
const docSize = 16
