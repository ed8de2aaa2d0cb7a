package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/anima-bot/anima/brain"
)

// The turns' vectors live beside the search index, in brain.BucketIndex under the chat's
// prefix (so Forget of a chat takes them with its index):
//
//	chat 'v'            → vecStats (JSON): the embedder's ID, the blocks, the high-water mark
//	chat 'w' block id   → a blob: records of seq (8 bytes) | scale (float32) | dims × int8
//
// A vector is normalised and quantised to int8 with a per-vector scale (its largest
// component / 127): 12 + dims bytes a turn, 268 at the 256 dimensions asked of
// text-embedding-3-* — a quarter of what float32 takes, for a cosine off by well under 1 %.
// Blocks are blobs (a page run each, see index.go) of up to vecBlockMax records; a batch is
// appended to the last block while it has room, so a chat has one block per vecBlockMax
// turns. Vectors of another embedder (another model or length) are not comparable: the
// next upkeep drops them and embeds the history again, a batch at a time.
const (
	tagVecStats = 'v'
	tagVecBlock = 'w'
	// vecBlockMax bounds a block's records (a batch rewrites at most one block).
	vecBlockMax = 256
	vecHeader   = 12 // seq + scale
)

type vecStats struct {
	// Embedder is the ID of the embedder that made the vectors, Dims their length.
	Embedder string `json:"embedder"`
	Dims     int    `json:"dims"`
	// Through is the highest history Seq looked at: every marked turn up to it that has
	// words has a vector (unless it was forgotten since).
	Through uint64     `json:"through_seq"`
	Blocks  []vecBlock `json:"blocks,omitempty"`
	Next    uint64     `json:"next_block,omitempty"`
}

type vecBlock struct {
	ID uint64 `json:"id"`
	N  int    `json:"n"`
}

func vecStatsKey(chat int64) []byte { return brain.Key(chat, []byte{tagVecStats}) }

func vecBlockKey(chat int64, id uint64) []byte {
	return brain.Key(chat, []byte{tagVecBlock}, brain.U64(id))
}

func loadVecStats(tx Tx, chat int64) (vecStats, error) {
	var s vecStats
	if _, err := tx.Get(brain.BucketIndex, vecStatsKey(chat), &s); err != nil {
		return vecStats{}, fmt.Errorf("read vector stats of chat %d: %w", chat, err)
	}
	return s, nil
}

// vector is one turn's quantised vector.
type vector struct {
	seq   uint64
	scale float32
	q     []int8
}

// quantize normalises v and quantises it to int8 with a scale; a zero vector has scale 0.
func quantize(seq uint64, v []float32) vector {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	out := vector{seq: seq, q: make([]int8, len(v))}
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	var peak float64
	for _, x := range v {
		peak = max(peak, math.Abs(float64(x)/norm))
	}
	scale := peak / 127
	for i, x := range v {
		out.q[i] = int8(math.Round(float64(x) / norm / scale))
	}
	out.scale = float32(scale)
	return out
}

// normalized returns v scaled to length 1 (v itself when it is zero).
func normalized(v []float32) []float32 {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return v
	}
	norm = math.Sqrt(norm)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / norm)
	}
	return out
}

// appendRecord appends v's record to b.
func appendRecord(b []byte, v vector) []byte {
	b = binary.BigEndian.AppendUint64(b, v.seq)
	b = binary.BigEndian.AppendUint32(b, math.Float32bits(v.scale))
	for _, x := range v.q {
		b = append(b, byte(x))
	}
	return b
}

var errBadBlock = errors.New("vector block of a wrong size")

// eachRecord calls fn with every record of a block of dims-long vectors: its seq, scale
// and components (valid until the transaction ends).
func eachRecord(block []byte, dims int, fn func(seq uint64, scale float32, q []byte)) error {
	size := vecHeader + dims
	if dims <= 0 || len(block)%size != 0 {
		return errBadBlock
	}
	for off := 0; off < len(block); off += size {
		r := block[off : off+size]
		fn(binary.BigEndian.Uint64(r), math.Float32frombits(binary.BigEndian.Uint32(r[8:])), r[vecHeader:])
	}
	return nil
}

// dot is the cosine of a normalised query with a record's quantised vector.
func dot(query []float32, scale float32, q []byte) float64 {
	var s float32
	for i, x := range q {
		s += query[i] * float32(int8(x))
	}
	return float64(s * scale)
}

// putVectors appends vs to chat's blocks in tx (the last block while it has room) and
// returns the stats, not yet written.
func putVectors(tx Tx, chat int64, st vecStats, vs []vector) (vecStats, error) {
	for len(vs) > 0 {
		var block []byte
		if n := len(st.Blocks); n > 0 && st.Blocks[n-1].N < vecBlockMax {
			last := &st.Blocks[n-1]
			old, err := tx.PeekBlob(brain.BucketIndex, vecBlockKey(chat, last.ID))
			if err != nil {
				return st, err
			}
			take := min(vecBlockMax-last.N, len(vs))
			block = append(make([]byte, 0, len(old)+take*(vecHeader+st.Dims)), old...)
			for _, v := range vs[:take] {
				block = appendRecord(block, v)
			}
			if err := tx.PutBlob(brain.BucketIndex, vecBlockKey(chat, last.ID), block); err != nil {
				return st, err
			}
			last.N += take
			vs = vs[take:]
			continue
		}
		take := min(vecBlockMax, len(vs))
		block = make([]byte, 0, take*(vecHeader+st.Dims))
		for _, v := range vs[:take] {
			block = appendRecord(block, v)
		}
		st.Next++
		if err := tx.PutBlob(brain.BucketIndex, vecBlockKey(chat, st.Next), block); err != nil {
			return st, err
		}
		st.Blocks = append(st.Blocks, vecBlock{ID: st.Next, N: take})
		vs = vs[take:]
	}
	return st, nil
}

// dropVectors deletes chat's blocks and returns stats that start afresh for embedder.
func dropVectors(tx Tx, chat int64, st vecStats, embedder string, dims int) (vecStats, error) {
	for _, b := range st.Blocks {
		if err := tx.DeleteBlob(brain.BucketIndex, vecBlockKey(chat, b.ID)); err != nil {
			return st, err
		}
	}
	return vecStats{Embedder: embedder, Dims: dims, Next: st.Next}, nil
}

// unindexVectors removes the vectors of the turns in drop from chat's blocks in tx (the
// blocks that hold any are rewritten without them, or deleted when none is left).
func unindexVectors(tx Tx, chat int64, drop map[uint64]bool) error {
	st, err := loadVecStats(tx, chat)
	if err != nil || len(st.Blocks) == 0 {
		return err
	}
	changed := false
	blocks := st.Blocks[:0:0]
	for _, b := range st.Blocks {
		v, err := tx.PeekBlob(brain.BucketIndex, vecBlockKey(chat, b.ID))
		if err != nil {
			return err
		}
		var kept []byte
		n := 0
		err = eachRecord(v, st.Dims, func(seq uint64, _ float32, _ []byte) {
			if !drop[seq] {
				n++
			}
		})
		if err != nil {
			return fmt.Errorf("vector block %d of chat %d: %w", b.ID, chat, err)
		}
		if n == len(v)/(vecHeader+st.Dims) { // none of them dropped
			blocks = append(blocks, b)
			continue
		}
		changed = true
		size := vecHeader + st.Dims
		for off := 0; off < len(v); off += size {
			if !drop[binary.BigEndian.Uint64(v[off:])] {
				kept = append(kept, v[off:off+size]...)
			}
		}
		if n == 0 {
			if err := tx.DeleteBlob(brain.BucketIndex, vecBlockKey(chat, b.ID)); err != nil {
				return err
			}
			continue
		}
		if err := tx.PutBlob(brain.BucketIndex, vecBlockKey(chat, b.ID), kept); err != nil {
			return err
		}
		blocks = append(blocks, vecBlock{ID: b.ID, N: n})
	}
	if !changed {
		return nil
	}
	st.Blocks = blocks
	return tx.Put(brain.BucketIndex, vecStatsKey(chat), st)
}

// vecRank returns the limit turns of chat whose vectors are nearest query (normalised),
// best first, with their cosines; none when chat's vectors are another embedder's.
func vecRank(tx Tx, chat int64, embedder string, query []float32, limit int) ([]scored, error) {
	st, err := loadVecStats(tx, chat)
	if err != nil || st.Embedder != embedder || st.Dims != len(query) {
		return nil, err
	}
	top := topK{k: limit}
	for _, b := range st.Blocks {
		v, err := tx.PeekBlob(brain.BucketIndex, vecBlockKey(chat, b.ID))
		if err != nil {
			return nil, err
		}
		err = eachRecord(v, st.Dims, func(seq uint64, scale float32, q []byte) {
			if s := dot(query, scale, q); s > 0 {
				top.offer(scored{doc: seq, score: s})
			}
		})
		if err != nil {
			return nil, fmt.Errorf("vector block %d of chat %d: %w", b.ID, chat, err)
		}
	}
	return top.best, nil
}
