package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
)

// answer is how one question fared.
type answer struct {
	category int
	// memAny, memAll: some, every evidence turn among Recall's memories; promptAny,
	// promptAll: anywhere in the Recall (memories or recent turns); searchAny: some among
	// Search's top k.
	memAny, memAll, promptAny, promptAll, searchAny bool
	memTokens                                       int
	took                                            time.Duration
}

// ask puts q to mem's Recall as the prompt builder does for a message (the question is
// the query; it is not written into the history) and, with k > 0, to Search for its top
// k. ok is false when no evidence id of q names a stored turn: there is nothing to find.
func ask(ctx context.Context, mem *memory.Memory, s *stored, q Question, budget, k int) (a answer, ok bool, err error) {
	want := map[string]bool{}
	for _, id := range evidenceIDs(q.Evidence) {
		if _, known := s.at[id]; known {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return a, false, nil
	}
	a.category = q.Category
	start := time.Now()
	rc, err := mem.Recall(ctx, chat, person, q.Question, budget)
	a.took = time.Since(start)
	if err != nil {
		return a, false, fmt.Errorf("recall %q: %w", q.Question, err)
	}
	inMem := map[string]bool{}
	for _, h := range rc.Memories {
		if h.Source != "turn" {
			continue
		}
		for _, at := range h.Times() {
			if want[s.diaAt(at)] {
				inMem[s.diaAt(at)] = true
			}
		}
	}
	anywhere := map[string]bool{}
	for id := range inMem {
		anywhere[id] = true
	}
	for _, t := range rc.Turns {
		if want[s.diaAt(t.At)] {
			anywhere[s.diaAt(t.At)] = true
		}
	}
	a.memAny, a.memAll = len(inMem) > 0, len(inMem) == len(want)
	a.promptAny, a.promptAll = len(anywhere) > 0, len(anywhere) == len(want)
	a.memTokens = (memory.Chars(brain.Recall{Memories: rc.Memories}) + 3) / 4
	if k > 0 {
		hits, err := mem.Search(chat, person, q.Question, k)
		if err != nil {
			return a, false, fmt.Errorf("search %q: %w", q.Question, err)
		}
		for _, h := range hits {
			a.searchAny = a.searchAny || h.Source == "turn" && want[s.diaAt(h.At)]
		}
	}
	return a, true, nil
}
