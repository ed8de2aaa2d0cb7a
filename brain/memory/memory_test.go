package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	openai "github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/brain/provider"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// newMemory is memory.New that fails the test on an error.
func newMemory[T memory.Tx](tb testing.TB, st memory.Store[T], s memory.Summarizer, opts memory.Options) *memory.Memory {
	tb.Helper()
	m, err := memory.New(st, s, opts)
	if err != nil {
		tb.Fatalf("memory.New: %v", err)
	}
	return m
}

// commit appends turns to chat's history and indexes them in the same transaction, as the
// core loop does, in a bbolt store (*storage.Store) or a memory-only one
// (*storagetest.Store).
func commit(tb testing.TB, st any, m *memory.Memory, chat int64, turns ...brain.Turn) {
	tb.Helper()
	index := func(tx memory.Tx) error { return m.IndexTx(tx, chat, turns) }
	if err := appendTx(st, chat, turns, index); err != nil {
		tb.Fatalf("commit: %v", err)
	}
}

// appendTurns appends turns to chat's history without indexing them.
func appendTurns(tb testing.TB, st any, chat int64, turns ...brain.Turn) {
	tb.Helper()
	if err := appendTx(st, chat, turns, nil); err != nil {
		tb.Fatalf("append turns: %v", err)
	}
}

// appendTx appends turns to chat's history and runs also (if any) in the same
// transaction.
func appendTx(st any, chat int64, turns []brain.Turn, also func(tx memory.Tx) error) error {
	switch st := st.(type) {
	case *storage.Store:
		c := storage.Commit{Chat: chat, Turns: turns}
		if also != nil {
			c.Also = func(tx *storage.Tx) error { return also(tx) }
		}
		_, err := st.CommitTurn(c, turns[0].At)
		return err
	case *storagetest.Store:
		return st.Update(func(tx *storagetest.Tx) error {
			if _, err := tx.AppendHistory(chat, turns...); err != nil || also == nil {
				return err
			}
			return also(tx)
		})
	}
	return fmt.Errorf("no turns in a %T", st)
}

// filler is the i-th turn of a long, ordinary conversation.
func filler(i int) brain.Turn {
	role := "user"
	if i%2 == 1 {
		role = "assistant"
	}
	topics := []string{"weather", "coffee", "work", "music", "dinner", "sleep", "football", "movies"}
	return brain.Turn{
		Role: role,
		Text: fmt.Sprintf("message %d: we chatted about %s and %s again, nothing special today",
			i, topics[i%len(topics)], topics[(i/3)%len(topics)]),
		At: t0.Add(time.Duration(i) * time.Minute),
	}
}

// fakeSummarizer counts calls and records what it was given.
type fakeSummarizer struct {
	mu       sync.Mutex
	calls    int
	previous []string
	folded   [][]brain.Turn
	text     func(n int) string
}

func (f *fakeSummarizer) Summarize(_ context.Context, previous string, turns []brain.Turn) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.previous = append(f.previous, previous)
	f.folded = append(f.folded, turns)
	if f.text != nil {
		return f.text(f.calls), nil
	}
	return fmt.Sprintf("summary %d: the user likes tea", f.calls), nil
}

func TestRememberRejects(t *testing.T) {
	t.Parallel()
	m := newMemory(t, storagetest.New(), nil, memory.Options{})
	for _, tc := range []struct{ name, attr, value string }{
		{"empty attribute", "  !!! ", "x"},
		{"empty value", "name", " \n "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := m.Remember(1, 1, tc.attr, tc.value, t0); err == nil {
				t.Fatal("no error")
			}
		})
	}
	for i := range 200 {
		if err := m.Remember(1, 1, fmt.Sprintf("attr %d", i), "v", t0); err != nil {
			t.Fatalf("fact %d: %v", i, err)
		}
	}
	if err := m.Remember(1, 1, "one more", "v", t0); err == nil {
		t.Error("fact 201 accepted")
	}
	if err := m.Remember(1, 1, "attr_5", "replaced", t0); err != nil {
		t.Errorf("replacing at the cap: %v", err)
	}
}

func TestNormalizeAttribute(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Favourite Color":        "favourite_color",
		"  sister's-name ":       "sister_s_name",
		"ДЕНЬ рождения":          "день_рождения",
		"!!!":                    "",
		strings.Repeat("ab", 50): strings.Repeat("ab", 32),
		strings.Repeat("a ", 40): strings.TrimRight(strings.Repeat("a_", 32), "_"),
	} {
		if got := memory.NormalizeAttribute(in); got != want {
			t.Errorf("NormalizeAttribute(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRecallExcludesRecentTurnsFromMemories(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{RecentTurns: 4})
	commit(t, st, m, 1, brain.Turn{Role: "user", Text: "the violin lesson went badly", At: t0})
	for i := 1; i < 10; i++ {
		commit(t, st, m, 1, filler(i))
	}
	commit(t, st, m, 1, brain.Turn{Role: "user", Text: "another violin lesson tomorrow", At: t0.Add(time.Hour)})
	r, err := m.Recall(context.Background(), 1, 1, "violin", 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Turns) != 4 || r.Turns[3].Text != "another violin lesson tomorrow" {
		t.Fatalf("turns = %+v", r.Turns)
	}
	if len(r.Memories) != 1 || !strings.Contains(r.Memories[0].Text, "went badly") {
		t.Errorf("memories = %+v, want only the old violin turn", r.Memories)
	}
}

func TestSearchFactsAndSummary(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	sum := &fakeSummarizer{text: func(int) string { return "The user is training for the Berlin marathon." }}
	m := newMemory(t, st, sum, memory.Options{RecentTurns: 2, SummarizeAfter: 3})
	for i := range 5 {
		commit(t, st, m, 1, filler(i))
	}
	if err := m.Maintain(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(1, 1, "dog_name", "Pixel the beagle", t0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, source, text string }{
		{"marathon", "summary", "Berlin marathon"},
		{"beagle", "fact", "dog_name: Pixel the beagle"},
		{"dog", "fact", "dog_name"},
	} {
		hits, err := m.Search(1, 1, tc.query, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Source != tc.source || !strings.Contains(hits[0].Text, tc.text) {
			t.Errorf("Search(%q) = %+v, want %s containing %q", tc.query, hits, tc.source, tc.text)
		}
	}
}

func TestMaintainSummarizesOncePerThreshold(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	sum := &fakeSummarizer{}
	reg := prometheus.NewRegistry()
	m := newMemory(t, st, sum, memory.Options{RecentTurns: 4, SummarizeAfter: 10, Registerer: reg})
	ctx := context.Background()

	callsAfter := map[int]int{}
	for i := range 30 {
		commit(t, st, m, 5, filler(i))
		if err := m.Maintain(ctx, 5); err != nil {
			t.Fatal(err)
		}
		callsAfter[i+1] = sum.calls
	}
	// 11 unsummarised turns → fold 7 (keep 4); 4 + 7 more = 11 at turn 18 → fold 7; at 25.
	for turns, want := range map[int]int{10: 0, 11: 1, 17: 1, 18: 2, 24: 2, 25: 3, 30: 3} {
		if got := callsAfter[turns]; got != want {
			t.Errorf("after %d turns: %d Summarize calls, want %d", turns, got, want)
		}
	}
	if len(sum.folded[0]) != 7 || sum.folded[0][0].Text != filler(0).Text || sum.folded[0][6].Text != filler(6).Text {
		t.Errorf("first fold = %d turns from %q", len(sum.folded[0]), sum.folded[0][0].Text)
	}
	if sum.previous[0] != "" || sum.previous[1] != "summary 1: the user likes tea" {
		t.Errorf("previous summaries given = %q", sum.previous)
	}
	if got := testutil.ToFloat64(m.MetricsSummaries("ok")); got != 3 {
		t.Errorf("summaries metric = %v, want 3", got)
	}

	// A new process finds only what is in the store.
	m = newMemory(t, st, sum, memory.Options{RecentTurns: 4, SummarizeAfter: 10})
	text, through, err := m.Summary(5)
	if err != nil || text != "summary 3: the user likes tea" || through == 0 {
		t.Fatalf("summary after reopen = %q through %d, %v", text, through, err)
	}
	if err := m.Maintain(ctx, 5); err != nil || sum.calls != 3 {
		t.Errorf("Maintain after reopen: calls %d, err %v", sum.calls, err)
	}
	r, err := m.Recall(ctx, 5, 5, "", 2000)
	if err != nil || r.Summary != text || len(r.Turns) != 4 {
		t.Errorf("recall = %+v, %v", r, err)
	}
}

type failingSummarizer struct{}

func (failingSummarizer) Summarize(context.Context, string, []brain.Turn) (string, error) {
	return "", fmt.Errorf("provider down")
}

func TestMaintainKeepsSummaryOnError(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, failingSummarizer{}, memory.Options{RecentTurns: 1, SummarizeAfter: 2})
	for i := range 4 {
		commit(t, st, m, 1, filler(i))
	}
	if err := m.Maintain(context.Background(), 1); err == nil {
		t.Fatal("no error")
	}
	if text, through, _ := m.Summary(1); text != "" || through != 0 {
		t.Errorf("summary = %q through %d", text, through)
	}
}

func TestRecallDoesNotGrowWithHistory(t *testing.T) {
	t.Parallel()
	size := func(t *testing.T, n int) int {
		st := storagetest.New()
		sum := &fakeSummarizer{text: func(int) string { return strings.Repeat("The user talked about coffee and work. ", 30) }}
		m := newMemory(t, st, sum, memory.Options{})
		long := func(i int) brain.Turn {
			turn := filler(i)
			turn.Text += strings.Repeat(" and then some more ordinary words", 6)
			return turn
		}
		for i := 0; i < n; i += 10 {
			turns := make([]brain.Turn, min(10, n-i))
			for j := range turns {
				turns[j] = long(i + j)
			}
			commit(t, st, m, 1, turns...)
			if err := m.Maintain(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 10 {
			if err := m.Remember(1, 1, fmt.Sprintf("fact %d", i), "something worth knowing about the user", t0); err != nil {
				t.Fatal(err)
			}
		}
		r, err := m.Recall(context.Background(), 1, 1, "coffee at work", 600)
		if err != nil {
			t.Fatal(err)
		}
		return memory.Chars(r)
	}
	small, large := size(t, 30), size(t, 1000)
	t.Logf("Recall size: %d chars at 30 turns, %d chars at 1000 turns (budget 600 tokens ≈ 2400 chars)", small, large)
	if large > small {
		t.Errorf("recall grew with history: %d > %d", large, small)
	}
	if large > 2400 || small > 2400 {
		t.Errorf("recall over budget: %d, %d", small, large)
	}
}

func TestReindex(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
	for i := range 20 {
		appendTurns(t, st, 3, filler(i))
	}
	commit(t, st, m, 3, brain.Turn{Role: "user", Text: "the harpsichord concert", At: t0})
	if hits, _ := m.Search(3, 3, "football", 5); len(hits) != 0 {
		t.Fatalf("unindexed turns found: %+v", hits)
	}
	// The index's high-water mark is past the unindexed turns: Reindex only goes forward.
	n, err := m.Reindex(3)
	if err != nil || n != 0 {
		t.Fatalf("Reindex = %d, %v", n, err)
	}
	for i := 20; i < 25; i++ {
		appendTurns(t, st, 3, filler(i))
	}
	if n, err := m.Reindex(3); err != nil || n != 5 {
		t.Fatalf("Reindex = %d, %v, want 5", n, err)
	}
	if n, _ := m.Reindex(3); n != 0 {
		t.Fatalf("second Reindex = %d, want 0", n)
	}
	hits, err := m.Search(3, 3, "message 22", 1)
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Text, "message 22:") {
		t.Errorf("hits = %+v, %v", hits, err)
	}
	// A chat with no index at all is indexed from the start.
	for i := range 3 {
		appendTurns(t, st, 4, filler(i))
	}
	if n, err := m.Reindex(4); err != nil || n != 3 {
		t.Fatalf("Reindex(4) = %d, %v, want 3", n, err)
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
	commit(t, st, m, 1, brain.Turn{Role: "user", Text: "I adopted a kitten named Miso", At: t0})
	tools := map[string]brain.Tool{}
	for _, tool := range m.Tools() {
		spec := tool.Spec()
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Additional *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s schema: %v", spec.Name, err)
		}
		if schema.Type != "object" || schema.Additional == nil || *schema.Additional || len(schema.Required) != len(schema.Properties) {
			t.Errorf("%s schema is not strict: %s", spec.Name, spec.Parameters)
		}
		tools[spec.Name] = tool
	}
	remember, search := tools["core_remember"], tools["core_memory_search"]
	if remember == nil || search == nil {
		t.Fatalf("tools = %v", tools)
	}
	if !remember.Spec().SideEffects || search.Spec().SideEffects {
		t.Error("side effects flags wrong")
	}

	for _, tc := range []struct {
		name    string
		tool    brain.Tool
		args    string
		wantErr bool
		want    string
	}{
		{"remember", remember, `{"attribute":"Pet Name","value":"Miso"}`, false, "remembered pet_name"},
		{"remember unknown field", remember, `{"attribute":"a","value":"b","x":1}`, true, ""},
		{"remember missing value", remember, `{"attribute":"a"}`, true, ""},
		{"remember null value", remember, `{"attribute":"a","value":null}`, true, ""},
		{"remember empty attribute", remember, `{"attribute":"!!","value":"b"}`, true, ""},
		{"remember blank value", remember, `{"attribute":"a","value":"  "}`, true, ""},
		{"remember not json", remember, `attribute=a`, true, ""},
		{"remember wrong type", remember, `{"attribute":1,"value":"b"}`, true, ""},
		{"remember trailing", remember, `{"attribute":"a","value":"b"} {}`, true, ""},
		{"search", search, `{"query":"kitten"}`, false, "- 2026-03-01 11:00 (turn) user: I adopted a kitten named Miso"},
		{"search nothing", search, `{"query":"dinosaur"}`, false, "nothing found"},
		{"search empty", search, `{"query":"  "}`, true, ""},
		{"search null", search, `null`, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.tool.Call(context.Background(), brain.ToolCall{
				Chat: 1, User: 1, Args: json.RawMessage(tc.args), Now: t0, Zone: time.FixedZone("CET", 3600)})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && res.Content != tc.want {
				t.Errorf("content = %q, want %q", res.Content, tc.want)
			}
		})
	}
	res, _ := remember.Call(context.Background(), brain.ToolCall{User: 9, Args: json.RawMessage(`{"attribute":"Pet Name","value":" Miso "}`)})
	want := brain.Remember{User: 9, Attribute: "pet_name", Value: "Miso"}
	if len(res.Intents) != 1 || res.Intents[0] != want {
		t.Errorf("intents = %#v, want %#v", res.Intents, want)
	}
	if facts, _ := m.Facts(9, 9); len(facts) != 0 {
		t.Errorf("core_remember wrote directly: %+v", facts)
	}
}

func TestOpenAISummarizer(t *testing.T) {
	t.Parallel()
	var got openai.ChatCompletionRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(openai.ChatCompletionResponse{
			Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: "assistant", Content: " New summary. "}}},
		})
	}))
	defer srv.Close()
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = srv.URL + "/v1"
	s := memory.OpenAISummarizer{Client: openai.NewClientWithConfig(cfg), Model: "small"}
	out, err := s.Summarize(context.Background(), "Old summary.", []brain.Turn{{Role: "user", Text: "I start my new job Monday", At: t0}})
	if err != nil {
		t.Fatal(err)
	}
	if out != "New summary." {
		t.Errorf("summary = %q", out)
	}
	if got.Model != "small" || len(got.Messages) != 2 || got.MaxCompletionTokens != 400 {
		t.Fatalf("request = %+v", got)
	}
	if u := got.Messages[1].Content; !strings.Contains(u, "Old summary.") || !strings.Contains(u, "user: I start my new job Monday") {
		t.Errorf("user message = %q", u)
	}
	if !strings.Contains(got.Messages[0].Content, "200 words") {
		t.Errorf("system prompt = %q", got.Messages[0].Content)
	}
}

// TestOpenAISummarizerRedactsProviderErrors: an endpoint's error that echoes the turns
// comes back (and so is logged) with the echo left out and cut to provider.MaxRunes;
// the status stays.
func TestOpenAISummarizerRedactsProviderErrors(t *testing.T) {
	t.Parallel()
	const secret = "my sister's diagnosis"
	for _, tc := range []struct {
		name  string
		reply openaitest.Reply
		want  string
	}{
		{"json", openaitest.Reply{Status: http.StatusBadRequest,
			Message: `content policy: "user: ` + secret + `" ` + strings.Repeat("flagged ", 50)},
			`summarize with small: llm endpoint answered 400, type server_error: content policy: "…" flagged`},
		{"raw body", openaitest.Reply{Status: http.StatusBadGateway, Body: "<pre>upstream said `" + secret + "`</pre>"},
			`summarize with small: llm endpoint answered 502: pre upstream said "…" /pre`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.New(t)
			srv.Enqueue(tc.reply)
			s := memory.OpenAISummarizer{Client: srv.Client(5 * time.Second), Model: "small"}
			_, err := s.Summarize(context.Background(), "", []brain.Turn{{Role: "user", Text: secret, At: t0}})
			if err == nil {
				t.Fatal("Summarize succeeded, want the endpoint's error")
			}
			msg := err.Error()
			if strings.Contains(msg, "diagnosis") || !strings.HasPrefix(msg, tc.want) {
				t.Errorf("error = %q, want it to start %q and leave the turn out", msg, tc.want)
			}
			if n := len([]rune(msg)); n > len("summarize with small: ")+provider.MaxRunes+1 {
				t.Errorf("error keeps %d runes, want the provider's part cut to %d", n, provider.MaxRunes)
			}
			var apiErr *openai.APIError
			var reqErr *openai.RequestError
			if !errors.As(err, &apiErr) && !errors.As(err, &reqErr) {
				t.Errorf("the go-openai error is lost beneath %q", msg)
			}
		})
	}
}

// RecentTurns at or above SummarizeAfter leaves nothing to fold at the threshold: Maintain
// must wait for a batch of foldable turns (SummarizeAfter is then counted beyond the
// recent turns) instead of panicking on an empty or negative slice, or folding every turn.
func TestMaintainWithRecentTurnsAboveThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ recent, after int }{{12, 5}, {6, 5}} {
		t.Run(fmt.Sprintf("recent=%d,after=%d", tc.recent, tc.after), func(t *testing.T) {
			st := storagetest.New()
			sum := &fakeSummarizer{}
			m := newMemory(t, st, sum, memory.Options{RecentTurns: tc.recent, SummarizeAfter: tc.after})
			for i := range tc.recent + tc.after + 1 {
				commit(t, st, m, 1, filler(i))
				if err := m.Maintain(context.Background(), 1); err != nil {
					t.Fatalf("Maintain after %d turns: %v", i+1, err)
				}
			}
			if sum.calls != 1 || len(sum.folded[0]) != tc.after+1 || sum.folded[0][0].Text != filler(0).Text {
				t.Errorf("Summarize calls = %d, folded = %+v; want one call folding the %d oldest turns", sum.calls, sum.folded, tc.after+1)
			}
		})
	}
}

// TestFactsAreScopedByChatAndUser: what a user told anima in private never enters a
// group's recall or search, and a fact told in a group is that member's fact there.
func TestFactsAreScopedByChatAndUser(t *testing.T) {
	t.Parallel()
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{})
	const ann, ben, grp = 1, 2, -100
	for _, f := range []struct {
		chat, user int64
		attr, val  string
	}{{ann, ann, "diagnosis", "secretflu"}, {grp, ben, "colour", "green"}, {grp, ann, "pet", "cat"}} {
		if err := m.Remember(f.chat, f.user, f.attr, f.val, t0); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, st, m, grp, brain.Turn{Role: "user", Text: "hello", At: t0, User: ann, Name: "Ann"})

	for _, c := range []struct {
		name       string
		chat, user int64
		want       string
	}{
		{"ann in private", ann, ann, "diagnosis=secretflu"},
		{"ann in the group", grp, ann, "pet=cat"},
		{"ben in the group", grp, ben, "colour=green"},
		{"ben in private", ben, ben, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := m.Recall(context.Background(), c.chat, c.user, "secretflu green cat diagnosis", 1000)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Facts {
				got = append(got, f.Attribute+"="+f.Value)
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("facts %q, want %q", got, c.want)
			}
			hits, err := m.Search(c.chat, c.user, "secretflu green cat", 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Source == "fact" && !strings.Contains(c.want, strings.ReplaceAll(h.Text, ": ", "=")) {
					t.Errorf("search hit %q is not this chat's fact about this user", h.Text)
				}
			}
		})
	}
}

func TestRememberReplacesSurvivesReopenAndRecalls(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{})
	if err := m.Remember(7, 7, "Favourite Colour", "green", t0); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(7, 7, "name", "Ann", t0); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(7, 7, "  favourite-colour ", "deep\nblue", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := m.Remember(8, 8, "name", "Bob", t0); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	st = storagetest.Open(t, path)
	m = newMemory(t, st, nil, memory.Options{})
	facts, err := m.Facts(7, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := []brain.Fact{
		{Attribute: "favourite_colour", Value: "deep blue", At: t0.Add(time.Hour)},
		{Attribute: "name", Value: "Ann", At: t0},
	}
	if len(facts) != len(want) {
		t.Fatalf("facts = %+v, want %+v", facts, want)
	}
	for i := range want {
		if facts[i].Attribute != want[i].Attribute || facts[i].Value != want[i].Value || !facts[i].At.Equal(want[i].At) {
			t.Errorf("fact %d = %+v, want %+v", i, facts[i], want[i])
		}
	}

	commit(t, st, m, 7, brain.Turn{Role: "user", Text: "hello", At: t0})
	r, err := m.Recall(context.Background(), 7, 7, "what colour do I like", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Facts) != 2 || r.Facts[0].Value != "deep blue" {
		t.Errorf("recall facts = %+v", r.Facts)
	}
	if len(r.Turns) != 1 || r.Turns[0].Text != "hello" {
		t.Errorf("recall turns = %+v", r.Turns)
	}

	// Forget removes the facts with the rest of the user's data.
	if err := st.Forget(7); err != nil {
		t.Fatal(err)
	}
	if facts, _ := m.Facts(7, 7); len(facts) != 0 {
		t.Errorf("facts after forget = %+v", facts)
	}
	if facts, _ := m.Facts(8, 8); len(facts) != 1 {
		t.Errorf("facts of another user = %+v", facts)
	}
}
