package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func load(t *testing.T, path string) []Conversation {
	t.Helper()
	convs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

func run(t *testing.T, convs []Conversation, opts Options) Report {
	t.Helper()
	opts.Dir = t.TempDir()
	r, err := Run(context.Background(), convs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ptr(v float64) *float64 { return &v }

// ignoreMeasured leaves out what the machine decides (times, the file's size).
var ignoreMeasured = cmpopts.IgnoreFields(Figures{}, "RecallP50us", "RecallP99us", "StoreBytes", "BytesPerTurn", "answers")

// TestFigures: testdata/maya.json (4 sessions, 34 turns, 9 questions of the 5 categories,
// one whose evidence names no turn) gives exactly these figures at the default budget.
// Per question (the last 12 turns, D3:7–D4:10, are Recall's recent turns; memories are
// search hits outside them, each with the turn before and after it, until their share is
// full — issue 34; before it, 3 hits alone: prompt all 0.75, memories any 0.75, all 0.625):
//
//	1 multi-hop   mugs for her sister     D2:4 D3:1  memories both            all
//	1 multi-hop   hobbies since the dog   D2:2 D4:8  D2:2 memories, D4:8 recent  any, prompt all
//	2 temporal    when adopt Biscuit      D1:1       memories                 all
//	2 temporal    when hiking Dolomites   D3:5       memories                 all
//	3 open-domain hotel that welcomes dogs D1:1      memories                 all
//	4 single-hop  what breed              D1:1       memories                 all
//	4 single-hop  who walked Biscuit      D4:4       a recent turn only       prompt all
//	5 adversarial plates for Theo's sister D2:4      memories                 all
//	5 adversarial cousin and Venice       D9:1       no such turn: unjudged
func TestFigures(t *testing.T) {
	t.Parallel()
	r := run(t, load(t, "testdata/maya.json"), Options{BudgetTokens: 6000, K: 3})
	overall := &Figures{Questions: 8, PromptAny: 1, PromptAll: 1, MemoriesAny: 0.875, MemoriesAll: 0.75,
		MemoryTokensP50: 281, SearchAnyAtK: ptr(0.75), Turns: 34}
	want := Report{BudgetTokens: 6000, K: 3, Unjudged: 1, Overall: overall,
		Categories: map[string]*Figures{
			"1": {Questions: 2, PromptAny: 1, PromptAll: 1, MemoriesAny: 1, MemoriesAll: 0.5, MemoryTokensP50: 281, SearchAnyAtK: ptr(0.5)},
			"2": {Questions: 2, PromptAny: 1, PromptAll: 1, MemoriesAny: 1, MemoriesAll: 1, MemoryTokensP50: 281, SearchAnyAtK: ptr(1)},
			"3": {Questions: 1, PromptAny: 1, PromptAll: 1, MemoriesAny: 1, MemoriesAll: 1, MemoryTokensP50: 281, SearchAnyAtK: ptr(1)},
			"4": {Questions: 2, PromptAny: 1, PromptAll: 1, MemoriesAny: 0.5, MemoriesAll: 0.5, MemoryTokensP50: 132, SearchAnyAtK: ptr(0.5)},
			"5": {Questions: 1, PromptAny: 1, PromptAll: 1, MemoriesAny: 1, MemoriesAll: 1, MemoryTokensP50: 281, SearchAnyAtK: ptr(1)},
		},
		Conversations: map[string]*Figures{"maya.json": overall},
	}
	if diff := cmp.Diff(want, r, ignoreMeasured, cmpopts.IgnoreUnexported(Report{}), cmpopts.IgnoreFields(Report{}, "Written", "Asked")); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if f := r.Overall; f.RecallP50us <= 0 || f.RecallP99us < f.RecallP50us || f.StoreBytes <= 0 || f.BytesPerTurn != float64(int(float64(f.StoreBytes)/34*10))/10 {
		t.Errorf("measured: Recall p50 %d µs, p99 %d µs, store %d bytes, %.1f a turn", f.RecallP50us, f.RecallP99us, f.StoreBytes, f.BytesPerTurn)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"overall":{"questions":8,"prompt_any":1,"prompt_all":1,"memories_any":0.875,"memories_all":0.75,"memory_tokens_p50":281,"recall_p50_us":`,
		`"categories":{"1":{"questions":2,`, `"conversations":{"maya.json":{"questions":8,`, `"search_any_at_k":0.75,`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("JSON lacks %s:\n%s", key, raw)
		}
	}
}

// TestNamesAndFormats: a file holding an array of conversations (locomo10.json's shape)
// reports each under its sample_id, a file of one under the file's name; the figures are
// the same either way, and without --k there is no search figure. The release's
// one-conversation files (keys at the top level) read as the same conversation.
func TestNamesAndFormats(t *testing.T) {
	t.Parallel()
	one := load(t, "testdata/maya.json")[0]
	raw, err := os.ReadFile("testdata/maya.json")
	if err != nil {
		t.Fatal(err)
	}
	second := strings.Replace(string(raw), `"maya-1"`, `"maya-2"`, 1)
	array := filepath.Join(t.TempDir(), "two.json")
	if err := os.WriteFile(array, []byte("[\n"+string(raw)+",\n"+second+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	var flat map[string]json.RawMessage // the release's NN.json: the conversation's keys at the top
	if err := json.Unmarshal(obj["conversation"], &flat); err != nil {
		t.Fatal(err)
	}
	flat["qa"] = obj["qa"]
	flatFile := filepath.Join(t.TempDir(), "flat.json")
	if b, err := json.Marshal(flat); err != nil || os.WriteFile(flatFile, b, 0o600) != nil {
		t.Fatalf("write %s: %v", flatFile, err)
	}
	flatConv := load(t, flatFile)[0]
	if flatConv.Name != "flat.json" || !cmp.Equal(flatConv.Sessions, one.Sessions) || !cmp.Equal(flatConv.QA, one.QA) {
		t.Errorf("the top-level form read as %+v, want maya.json's sessions and questions", flatConv)
	}
	both := load(t, array)
	if got := []string{both[0].Name, both[1].Name}; !slices.Equal(got, []string{"maya-1", "maya-2"}) {
		t.Fatalf("names %q, want the sample_ids", got)
	}
	r := run(t, both, Options{BudgetTokens: 6000})
	single := run(t, []Conversation{one}, Options{BudgetTokens: 6000})
	for _, name := range []string{"maya-1", "maya-2"} {
		if diff := cmp.Diff(single.Conversations["maya.json"], r.Conversations[name], ignoreMeasured); diff != "" {
			t.Errorf("%s (-alone +in the array):\n%s", name, diff)
		}
	}
	if r.Overall.Questions != 16 || r.Overall.Turns != 68 || r.Unjudged != 2 || r.Overall.SearchAnyAtK != nil {
		t.Errorf("overall %+v, unjudged %d: want 16 questions, 68 turns, 2 unjudged, no search figure", r.Overall, r.Unjudged)
	}
	if _, err := Run(context.Background(), []Conversation{one, one}, Options{Dir: t.TempDir()}); err == nil {
		t.Error("two conversations of one name: no error")
	}
}

// TestEvidenceByIdentity: a turn is judged by which turn it is, not by its words. The
// person says the same sentence in the first and the last session; the question, sharing
// no word with it, finds no memory, so only the recent copy is in the Recall — and the
// evidence, the first one, is not.
func TestEvidenceByIdentity(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 3, d, 18, 0, 0, 0, time.UTC) }
	line := func(who, id, text string) Line { return Line{Speaker: who, DiaID: id, Text: text} }
	var filler []Line // more than Recall's 12 recent turns
	for i := range 14 {
		filler = append(filler, line([]string{"Ana", "Bo"}[i%2], "D2:"+strconv.Itoa(i+1), "Filler words here."))
	}
	c := Conversation{Name: "echo", SpeakerA: "Ana", SpeakerB: "Bo", Sessions: []Session{
		{N: 1, At: day(1), Turns: []Line{line("Ana", "D1:1", "The kettle whistles again."), line("Bo", "D1:2", "Noted.")}},
		{N: 2, At: day(2), Turns: filler},
		{N: 3, At: day(3), Turns: []Line{line("Ana", "D3:1", "The kettle whistles again.")}},
	}, QA: []Question{{Question: "What sound did she mention?", Evidence: []string{"D1:1"}, Category: 4},
		{Question: "What sound did she mention last?", Evidence: []string{"D3:1"}, Category: 2}}}
	r := run(t, []Conversation{c}, Options{BudgetTokens: 6000})
	if first, last := r.Categories["4"], r.Categories["2"]; first.PromptAny != 0 || last.PromptAny != 1 || first.MemoriesAny != 0 || last.MemoriesAny != 0 {
		t.Errorf("D1:1 in the prompt %v, D3:1 %v, in the memories %v and %v: want only D3:1, a recent turn",
			first.PromptAny, last.PromptAny, first.MemoriesAny, last.MemoriesAny)
	}
}

// TestLoadErrors: what Load refuses, each naming what is wrong.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file, want string }{
		{"no speakers", `{"conversation": {"session_1": []}}`, "speaker_a"},
		{"stranger", `{"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{"speaker": "C", "dia_id": "D1:1", "text": "hi"}]}}`, `speaker "C"`},
		{"bad date", `{"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "8 May 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}`, "session_1_date_time"},
		{"no turns", `{"conversation": {"speaker_a": "A", "speaker_b": "B"}}`, "no session_N"},
		{"empty array", `[]`, "no conversation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
