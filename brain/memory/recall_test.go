package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage/storagetest"
)

// memoriesText is every recalled memory's text, one after the other.
func memoriesText(r brain.Recall) string {
	var b strings.Builder
	for _, h := range r.Memories {
		b.WriteString(h.Text + "\n")
	}
	return b.String()
}

// recallOf commits turns to chat 1 (user 7), folds them, and recalls query with budget
// tokens, the last 4 turns being the recent ones.
func recallOf(t *testing.T, opts memory.Options, query string, budget int, turns ...brain.Turn) brain.Recall {
	t.Helper()
	st := storagetest.New()
	opts.RecentTurns = 4
	m := newMemory(t, st, nil, opts)
	for i := range turns {
		if turns[i].At.IsZero() {
			turns[i].At = t0.Add(time.Duration(i) * time.Minute)
		}
		commit(t, st, m, 1, turns[i])
	}
	if err := m.Maintain(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	r, err := m.Recall(context.Background(), 1, 7, query, budget)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fillers are n ordinary turns to push what came before out of the recent ones.
func fillers(n int) []brain.Turn {
	out := make([]brain.Turn, n)
	for i := range out {
		out[i] = filler(100 + i)
	}
	return out
}

// TestRecallBringsTheTurnsAroundAHit (issue 34): the answer is often beside the hit — the
// question that matches and the reply that holds the answer share no word — so a hit
// comes with the turn before and after it, merged into one memory in time order.
func TestRecallBringsTheTurnsAroundAHit(t *testing.T) {
	t.Parallel()
	turns := append([]brain.Turn{
		{Role: "user", Text: "I finally finished the pottery class today", User: 7},
		{Role: "assistant", Text: "Nice! What books do you enjoy lately?"},
		{Role: "user", Text: "Mostly Becky Chambers, the wayfarers series", User: 7},
		{Role: "assistant", Text: "Lovely choice."},
	}, fillers(12)...)
	r := recallOf(t, memory.Options{}, "which books does she enjoy", 6000, turns...)
	got := memoriesText(r)
	if !strings.Contains(got, "Becky Chambers") {
		t.Errorf("the answer beside the hit is not recalled:\n%s", got)
	}
	if i, j := strings.Index(got, "What books"), strings.Index(got, "Becky"); i < 0 || j < i {
		t.Errorf("the question and its answer are not one memory in time order:\n%s", got)
	}
}

// TestRecallFillsItsShare (issue 34): Recall keeps hits until its memories' share (15 % of
// the budget) is full, not 3, and never more.
func TestRecallFillsItsShare(t *testing.T) {
	t.Parallel()
	var turns []brain.Turn
	for i := range 60 {
		turns = append(turns, brain.Turn{Role: "user", User: 7, Text: fmt.Sprintf("the heron by the canal again, day %d", i)})
		turns = append(turns, filler(i))
		turns = append(turns, filler(i+1000))
	}
	turns = append(turns, fillers(8)...)
	const budget = 6000
	r := recallOf(t, memory.Options{}, "heron canal", budget, turns...)
	n := 0
	chars := 0
	for _, h := range r.Memories {
		n += strings.Count(h.Text, "heron")
		chars += len(h.Text) + 24
	}
	if n <= 3 {
		t.Errorf("%d heron turns recalled, want more than 3 (the share is %d characters)", n, budget*4*15/100)
	}
	if chars > budget*4*15/100 {
		t.Errorf("memories take %d characters, over their share of %d", chars, budget*4*15/100)
	}
	if chars < budget*4*15/100*2/3 {
		t.Errorf("memories take %d characters of their share of %d: not filled", chars, budget*4*15/100)
	}
}

// TestRecallPassesOverOpeners (issue 34): an opener anima said again and again is
// recalled once, so its "thinking of you" openers do not crowd out the person's words.
func TestRecallPassesOverOpeners(t *testing.T) {
	t.Parallel()
	var turns []brain.Turn
	for range 5 {
		turns = append(turns, brain.Turn{Role: "assistant", Kind: brain.KindProactive, Text: "Thinking of you: how is the garden?"})
		turns = append(turns, fillers(3)...)
	}
	turns = append(turns, brain.Turn{Role: "user", User: 7, Text: "the garden is full of tomatoes now"})
	turns = append(turns, fillers(6)...)
	r := recallOf(t, memory.Options{}, "garden", 6000, turns...)
	got := memoriesText(r)
	if n := strings.Count(got, "Thinking of you"); n > 1 {
		t.Errorf("anima's opener came back %d times:\n%s", n, got)
	}
	if !strings.Contains(got, "tomatoes") {
		t.Errorf("the person's words are not recalled:\n%s", got)
	}
}

// TestSearchStemsAndKnowsSpeakers (issue 34): a real stemmer meets a word's forms
// (movies/movie, painted/painting, classes/class), and the writer's name is indexed, so a
// question naming someone finds their own words over someone else's mention of the name.
func TestSearchStemsAndKnowsSpeakers(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
	commit(t, st, m, -5,
		brain.Turn{Role: "user", User: 1, Name: "Maria", Text: "I joined a gym last week!", At: t0},
		brain.Turn{Role: "user", User: 2, Name: "John", Text: "Yeah, Maria! A gym, a gym, how great", At: t0.Add(time.Minute)},
		brain.Turn{Role: "user", User: 1, Name: "Maria", Text: "I painted a sunrise and watched two movies", At: t0.Add(2 * time.Minute)},
		brain.Turn{Role: "user", User: 2, Name: "John", Text: "my pottery classes start soon", At: t0.Add(3 * time.Minute)},
	)
	for _, tc := range []struct{ query, want string }{
		{"When did Maria join a gym?", "I joined a gym"},
		{"what is Maria painting", "painted a sunrise"},
		{"any movie lately", "two movies"},
		{"the class he takes", "pottery classes"},
	} {
		hits, err := m.Search(-5, 1, tc.query, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || !strings.Contains(hits[0].Text, tc.want) {
			t.Errorf("Search(%q) = %+v, want first the turn with %q", tc.query, hits, tc.want)
		}
	}
}

// TestIndexRebuiltForOtherTerms (issue 34): an index whose segments hold other terms (an
// older anima's, or another language's) is rebuilt from history when next used, losing
// no turn: a store indexed without stemming, opened stemming English, finds "painting"
// in "painted" and every turn it found before.
func TestIndexRebuiltForOtherTerms(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	old := newMemory(t, st, nil, memory.Options{Language: "none"})
	const n = 300
	commit(t, st, old, 1, brain.Turn{Role: "user", User: 7, Text: "I painted the fence blue", At: t0.Add(-time.Hour)})
	for i := 0; i < n; i += 50 {
		commit(t, st, old, 1, variedTurns(i, 50)...)
	}
	if err := old.Maintain(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if segments(t, st, 1) == 0 {
		t.Fatal("nothing folded: the test proves nothing")
	}
	if hits, _ := old.Search(1, 7, "painting", 5); len(hits) != 0 {
		t.Fatalf("the unstemmed index found %+v for painting", hits)
	}
	m := newMemory(t, st, nil, memory.Options{})
	hits, err := m.Search(1, 7, "painting", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || !strings.Contains(hits[0].Text, "painted the fence") {
		t.Errorf("after the rebuild Search(painting) = %+v", hits)
	}
	for i := 0; i < n; i += 37 {
		q := strings.SplitN(varied(i).Text, ":", 2)[0] // "turn i"
		hits, err := m.Search(1, 7, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || !strings.HasPrefix(strings.SplitN(hits[0].Text, ": ", 2)[1], q+":") {
			t.Errorf("turn %d is lost after the rebuild: Search(%q) = %+v", i, q, hits)
		}
	}
}
