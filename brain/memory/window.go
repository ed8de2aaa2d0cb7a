package memory

import "slices"

// Recall ranks turns as the middle of a window: a turn with the one before and after it
// scored as one document (BM25 over the window's summed term counts and length). The
// answer to a question is often beside the turn that shares its words — "What books do
// you enjoy?" next to the reply that names them — and a window whose middle is the reply
// holds both. Search (the tool) still ranks turns alone.

// windowTF are the query terms' counts in the docs of a run (a segment's docs table, or
// the tail) that hold any, by the doc's index in the run.
type windowTF struct {
	nterms int
	slot   map[int]int // doc index → its counts' offset in tf
	tf     []float32
}

func newWindowTF(nterms int) *windowTF {
	return &windowTF{nterms: nterms, slot: map[int]int{}}
}

// add counts term i n times in doc idx.
func (w *windowTF) add(idx, i int, n float32) {
	s, ok := w.slot[idx]
	if !ok {
		s = len(w.tf)
		w.slot[idx] = s
		w.tf = append(w.tf, make([]float32, w.nterms)...)
	}
	w.tf[s+i] += n
}

// count is term i's count in doc idx (0 for a doc without any).
func (w *windowTF) count(idx, i int) float32 {
	if s, ok := w.slot[idx]; ok {
		return w.tf[s+i]
	}
	return 0
}

// offerWindows scores every window whose middle is a doc of the run or beside one that
// holds a term (n docs; dl and seq read doc idx's length and Seq) and offers it to top.
func (c *corpus) offerWindows(top *topK, w *windowTF, n int, dl func(int) float64, seq func(int) uint64) {
	mids := make([]int, 0, 3*len(w.slot))
	for idx := range w.slot {
		for d := -neighbourSpan; d <= neighbourSpan; d++ {
			if m := idx + d; m >= 0 && m < n {
				mids = append(mids, m)
			}
		}
	}
	slices.Sort(mids)
	mids = slices.Compact(mids)
	const width = 2*neighbourSpan + 1
	for _, m := range mids {
		var wdl float64
		for d := -neighbourSpan; d <= neighbourSpan; d++ {
			if j := m + d; j >= 0 && j < n {
				wdl += dl(j)
			}
		}
		var s float64
		for i := range c.terms {
			var tf float64
			for d := -neighbourSpan; d <= neighbourSpan; d++ {
				tf += float64(w.count(m+d, i))
			}
			if tf > 0 {
				// A window is width documents: measured against avgdl as one of average length.
				s += c.bm(tf, wdl/width, i)
			}
		}
		if s > 0 {
			top.offer(scored{doc: seq(m), score: s})
		}
	}
}

// neighbourSpan is how many turns on each side of its middle a window holds.
const neighbourSpan = 1

// segmentWindows offers top the windows of a segment (its docs table docs).
func (c *corpus) segmentWindows(top *topK, sp segPostings, docs []segDoc) error {
	w := newWindowTF(len(c.terms))
	for i := range c.terms {
		if sp.dfs[i] == 0 {
			continue
		}
		err := eachPosting(sp.terms[i], sp.dfs[i], func(idx, tf uint64) {
			if idx < uint64(len(docs)) {
				w.add(int(idx), i, float32(tf))
			}
		})
		if err != nil {
			return err
		}
	}
	c.offerWindows(top, w, len(docs), func(j int) float64 { return float64(docs[j].dl) }, func(j int) uint64 { return docs[j].seq })
	return nil
}

// tailWindows offers top the windows of the unfolded tail.
func (c *corpus) tailWindows(top *topK) {
	if len(c.tail) == 0 {
		return
	}
	w := newWindowTF(len(c.terms))
	for j, d := range c.tail {
		for i, term := range c.terms {
			if tf := d.tf[term]; tf > 0 {
				w.add(j, i, float32(tf))
			}
		}
	}
	c.offerWindows(top, w, len(c.tail), func(j int) float64 { return float64(c.tail[j].dl) }, func(j int) uint64 { return c.tail[j].seq })
}
