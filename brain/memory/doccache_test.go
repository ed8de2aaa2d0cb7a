package memory

import (
	"slices"
	"testing"
)

// TestDocCacheNeverServesAStaleTable: a segment rebuilt with other docs (as forgetting a
// user rewrites it under the same id) gets its own table, and the cache stays within its
// budget, dropping the least recently used table first.
func TestDocCacheNeverServesAStaleTable(t *testing.T) {
	t.Parallel()
	build := func(seqs ...uint64) segment {
		t.Helper()
		b := newSegBuilder()
		for _, s := range seqs {
			b.add(s, s%7+1, map[string]uint64{"word": 1})
		}
		seg, err := parseSegment(b.encode())
		if err != nil {
			t.Fatal(err)
		}
		return seg
	}
	c := newDocCache(3 * docSize * 4) // three tables of four docs
	seqsOf := func(seg segment) []uint64 {
		t.Helper()
		docs, err := c.table(seg)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, d := range docs {
			out = append(out, d.seq)
		}
		return out
	}
	a, rebuilt := build(1, 2, 3, 4), build(1, 3, 4, 9)
	if got := seqsOf(a); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("table = %v", got)
	}
	if got := seqsOf(rebuilt); !slices.Equal(got, []uint64{1, 3, 4, 9}) {
		t.Fatalf("rebuilt segment's table = %v, want its own docs", got)
	}
	seqsOf(a) // a is now the most recent
	for i := range uint64(3) {
		seqsOf(build(10*i+10, 10*i+11, 10*i+12, 10*i+13))
	}
	if c.bytes > c.max || len(c.byKey) != 3 || c.order.Len() != 3 {
		t.Fatalf("cache holds %d bytes in %d tables (list %d), budget %d", c.bytes, len(c.byKey), c.order.Len(), c.max)
	}
}
