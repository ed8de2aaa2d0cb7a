package bench

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

// Figures are the measures of a set of questions (all, a category's, a conversation's).
// The fractions count the questions judged, those with evidence among the stored turns.
type Figures struct {
	Questions int `json:"questions"`
	// PromptAny, PromptAll: some, every evidence turn anywhere in the Recall (its
	// memories or its recent turns; the bench writes no facts and, calling no model, no
	// summary).
	PromptAny float64 `json:"prompt_any"`
	PromptAll float64 `json:"prompt_all"`
	// MemoriesAny, MemoriesAll: some, every evidence turn among the Recall's memories.
	MemoriesAny float64 `json:"memories_any"`
	MemoriesAll float64 `json:"memories_all"`
	// MemoryTokensP50 is the median of the tokens the memories take (memory.Chars / 4).
	MemoryTokensP50 int `json:"memory_tokens_p50"`
	// RecallP50us, RecallP99us are Recall's wall time, microseconds.
	RecallP50us int64 `json:"recall_p50_us"`
	RecallP99us int64 `json:"recall_p99_us"`
	// SearchAnyAtK: some evidence turn among Search's top k (with --k only).
	SearchAnyAtK *float64 `json:"search_any_at_k,omitempty"`
	// Turns, StoreBytes, BytesPerTurn: the turns written, the store's file (its data
	// area) after them, and the two's ratio; not for a category.
	Turns        int     `json:"turns,omitempty"`
	StoreBytes   int64   `json:"store_bytes,omitempty"`
	BytesPerTurn float64 `json:"bytes_per_turn,omitempty"`

	answers []answer
}

// Report is the bench's result.
type Report struct {
	BudgetTokens  int                 `json:"budget_tokens"`
	K             int                 `json:"k,omitempty"`
	Overall       *Figures            `json:"overall"`
	Categories    map[string]*Figures `json:"categories"`
	Conversations map[string]*Figures `json:"conversations"`
	// Unjudged counts the questions none of whose evidence ids names a turn.
	Unjudged int `json:"unjudged"`
	// Embedding counts the embedder's requests, texts and tokens (with Options.Embedder).
	Embedding *counting `json:"embedding,omitempty"`
	// Written and Asked are the time spent writing the conversations and asking them.
	Written time.Duration `json:"-"`
	Asked   time.Duration `json:"-"`

	order []string // conversations in the order run
}

func newReport(opts Options) Report {
	return Report{BudgetTokens: opts.BudgetTokens, K: opts.K, Overall: &Figures{},
		Categories: map[string]*Figures{}, Conversations: map[string]*Figures{}}
}

// add counts a in the overall figures, its category's and its conversation's.
func (r *Report) add(conv, category string, a answer) {
	if r.Categories[category] == nil {
		r.Categories[category] = &Figures{}
	}
	for _, f := range []*Figures{r.Overall, r.Categories[category], r.Conversations[conv]} {
		f.answers = append(f.answers, a)
	}
}

// finish computes every Figures from its answers.
func (r *Report) finish() {
	for _, name := range r.order {
		c := r.Conversations[name]
		r.Overall.Turns += c.Turns
		r.Overall.StoreBytes += c.StoreBytes
	}
	for _, f := range append(slices.Collect(maps.Values(r.Categories)), slices.Collect(maps.Values(r.Conversations))...) {
		f.compute(r.K)
	}
	r.Overall.compute(r.K)
}

func (f *Figures) compute(k int) {
	n := len(f.answers)
	f.Questions = n
	if f.Turns > 0 {
		f.BytesPerTurn = math.Round(float64(f.StoreBytes)/float64(f.Turns)*10) / 10
	}
	if n == 0 {
		return
	}
	share := func(pred func(answer) bool) float64 {
		c := 0
		for _, a := range f.answers {
			if pred(a) {
				c++
			}
		}
		return float64(c) / float64(n)
	}
	f.PromptAny = share(func(a answer) bool { return a.promptAny })
	f.PromptAll = share(func(a answer) bool { return a.promptAll })
	f.MemoriesAny = share(func(a answer) bool { return a.memAny })
	f.MemoriesAll = share(func(a answer) bool { return a.memAll })
	if k > 0 {
		v := share(func(a answer) bool { return a.searchAny })
		f.SearchAnyAtK = &v
	}
	tokens := make([]int, n)
	took := make([]time.Duration, n)
	for i, a := range f.answers {
		tokens[i], took[i] = a.memTokens, a.took
	}
	f.MemoryTokensP50 = quantile(tokens, 0.50)
	f.RecallP50us = quantile(took, 0.50).Microseconds()
	f.RecallP99us = quantile(took, 0.99).Microseconds()
}

// quantile is the q-quantile of vs by nearest rank (vs is sorted in place; not empty).
func quantile[T cmp.Ordered](vs []T, q float64) T {
	slices.Sort(vs)
	i := int(math.Ceil(q*float64(len(vs)))) - 1
	return vs[max(i, 0)]
}
