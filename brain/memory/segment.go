package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
)

// A segment is one value holding the postings of a run of folded turns, laid out so that
// a term is found by binary search without decoding the rest:
//
//	u32 nterms | u32 len(docs) | docs | nterms × u32 entry offset | entries
//	docs:  uvarint n, then per turn uvarint (seq − previous seq), uvarint length in terms
//	entry: uvarint len(term), term, uvarint df, df × (uvarint doc index delta, uvarint tf)
//
// Doc indexes are positions in the segment's docs table, so scoring a segment adds into a
// dense array; entries are sorted by term.

var errCorruptSegment = errors.New("corrupt index segment")

// segDoc is a turn in a segment: its history Seq and length in terms.
type segDoc struct{ seq, dl uint64 }

// posting is a term's count in the doc at index idx of a segment.
type posting struct{ idx, tf uint64 }

// segBuilder collects the postings of a segment in doc order.
type segBuilder struct {
	docs  []segDoc
	terms map[string][]posting
}

func newSegBuilder() *segBuilder { return &segBuilder{terms: map[string][]posting{}} }

// add appends a doc with its term counts.
func (b *segBuilder) add(seq, dl uint64, tf map[string]uint64) {
	idx := uint64(len(b.docs))
	b.docs = append(b.docs, segDoc{seq, dl})
	for t, n := range tf {
		b.terms[t] = append(b.terms[t], posting{idx, n})
	}
}

// encode returns the segment's bytes.
func (b *segBuilder) encode() []byte {
	terms := make([]string, 0, len(b.terms))
	for t := range b.terms {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var docs []byte
	docs = binary.AppendUvarint(docs, uint64(len(b.docs)))
	var prev uint64
	for _, d := range b.docs {
		docs = binary.AppendUvarint(docs, d.seq-prev)
		docs = binary.AppendUvarint(docs, d.dl)
		prev = d.seq
	}
	var entries []byte
	offsets := make([]uint32, len(terms))
	for i, t := range terms {
		offsets[i] = uint32(len(entries))
		entries = binary.AppendUvarint(entries, uint64(len(t)))
		entries = append(entries, t...)
		ps := b.terms[t]
		entries = binary.AppendUvarint(entries, uint64(len(ps)))
		var last uint64
		for _, p := range ps {
			entries = binary.AppendUvarint(entries, p.idx-last)
			entries = binary.AppendUvarint(entries, p.tf)
			last = p.idx
		}
	}
	out := make([]byte, 0, 8+len(docs)+4*len(terms)+len(entries))
	out = binary.BigEndian.AppendUint32(out, uint32(len(terms)))
	out = binary.BigEndian.AppendUint32(out, uint32(len(docs)))
	out = append(out, docs...)
	for _, o := range offsets {
		out = binary.BigEndian.AppendUint32(out, o)
	}
	return append(out, entries...)
}

// segment reads an encoded segment in place.
type segment struct {
	nterms  int
	docs    []byte
	offsets []byte
	entries []byte
}

func parseSegment(v []byte) (segment, error) {
	if len(v) < 8 {
		return segment{}, errCorruptSegment
	}
	n := int(binary.BigEndian.Uint32(v))
	dl := int(binary.BigEndian.Uint32(v[4:]))
	if n < 0 || dl < 0 || 8+dl+4*n > len(v) {
		return segment{}, errCorruptSegment
	}
	return segment{nterms: n, docs: v[8 : 8+dl], offsets: v[8+dl : 8+dl+4*n], entries: v[8+dl+4*n:]}, nil
}

// entry returns the term at position i and the rest of its entry (df and postings).
func (s segment) entry(i int) (term, rest []byte, err error) {
	off := int(binary.BigEndian.Uint32(s.offsets[4*i:]))
	if off >= len(s.entries) {
		return nil, nil, errCorruptSegment
	}
	e := s.entries[off:]
	n, k := binary.Uvarint(e)
	if k <= 0 || uint64(len(e)-k) < n {
		return nil, nil, errCorruptSegment
	}
	return e[k : k+int(n)], e[k+int(n):], nil
}

// lookup returns the postings of term (nil if the segment does not have it) and its df.
func (s segment) lookup(term string) (postings []byte, df uint64, err error) {
	var ferr error
	i := sort.Search(s.nterms, func(i int) bool {
		t, _, err := s.entry(i)
		if err != nil {
			ferr = err
			return true
		}
		return string(t) >= term
	})
	if ferr != nil {
		return nil, 0, ferr
	}
	if i == s.nterms {
		return nil, 0, nil
	}
	t, rest, err := s.entry(i)
	if err != nil || string(t) != term {
		return nil, 0, err
	}
	df, k := binary.Uvarint(rest)
	if k <= 0 {
		return nil, 0, errCorruptSegment
	}
	return rest[k:], df, nil
}

// eachPosting calls fn for the df postings at p.
func eachPosting(p []byte, df uint64, fn func(idx, tf uint64)) error {
	var idx uint64
	for range df {
		d, a := binary.Uvarint(p)
		if a <= 0 {
			return errCorruptSegment
		}
		tf, b := binary.Uvarint(p[a:])
		if b <= 0 {
			return errCorruptSegment
		}
		p = p[a+b:]
		idx += d
		fn(idx, tf)
	}
	return nil
}

// docTable decodes the segment's docs.
func (s segment) docTable() ([]segDoc, error) {
	p := s.docs
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return nil, errCorruptSegment
	}
	p = p[k:]
	docs := make([]segDoc, 0, n)
	var seq uint64
	for range n {
		d, a := binary.Uvarint(p)
		if a <= 0 {
			return nil, errCorruptSegment
		}
		dl, b := binary.Uvarint(p[a:])
		if b <= 0 {
			return nil, errCorruptSegment
		}
		p = p[a+b:]
		seq += d
		docs = append(docs, segDoc{seq, dl})
	}
	return docs, nil
}

// appendTo adds the segment's docs to b, keeping only those keep accepts (nil: all), and
// returns the docs kept.
func (s segment) appendTo(b *segBuilder, keep func(seq uint64) bool) ([]segDoc, error) {
	docs, err := s.docTable()
	if err != nil {
		return nil, err
	}
	base := uint64(len(b.docs))
	remap := make([]int64, len(docs))
	var kept []segDoc
	for i, d := range docs {
		remap[i] = -1
		if keep == nil || keep(d.seq) {
			remap[i] = int64(base) + int64(len(kept))
			kept = append(kept, d)
		}
	}
	b.docs = append(b.docs, kept...)
	for i := range s.nterms {
		t, rest, err := s.entry(i)
		if err != nil {
			return nil, err
		}
		df, k := binary.Uvarint(rest)
		if k <= 0 {
			return nil, errCorruptSegment
		}
		var ps []posting
		err = eachPosting(rest[k:], df, func(idx, tf uint64) {
			if idx < uint64(len(remap)) && remap[idx] >= 0 {
				ps = append(ps, posting{uint64(remap[idx]), tf})
			}
		})
		if err != nil {
			return nil, err
		}
		if len(ps) > 0 {
			key := string(bytes.Clone(t))
			b.terms[key] = append(b.terms[key], ps...)
		}
	}
	return kept, nil
}
