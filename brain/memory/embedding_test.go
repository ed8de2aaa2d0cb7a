package memory_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage/storagetest"
)

// meter is a memory.Meter that records what is charged.
type meter struct {
	mu      sync.Mutex
	spent   bool // the day's budget
	charged map[int64]int
}

func (m *meter) Allowed(int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.spent
}

func (m *meter) Charge(user int64, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.charged == nil {
		m.charged = map[int64]int{}
	}
	m.charged[user] += tokens
}

func (m *meter) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, v := range m.charged {
		n += v
	}
	return n
}

const embedModel = "text-embedding-3-small"

func embedder(ai *openaitest.Server) memory.OpenAIEmbedder {
	return memory.OpenAIEmbedder{Client: ai.Client(5 * time.Second), Model: embedModel, Dimensions: memory.EmbedderDimensions(embedModel)}
}

// puppyTurns are a turn about a puppy among 40 ordinary ones; no word of it but the
// puppy is in the query the tests ask ("how is the dog").
func puppyTurns() []brain.Turn {
	turns := append([]brain.Turn{
		{Role: "user", Text: "We adopted a puppy, Biscuit!", User: 7},
		{Role: "assistant", Text: "Congratulations!"},
	}, fillers(40)...)
	for i := range turns {
		turns[i].At = t0.Add(time.Duration(i) * time.Minute)
	}
	return turns
}

// TestRecallFindsByMeaning (issue 34): with an embedder, a turn that shares no word with
// the query — "puppy" for "dog" — is recalled; lexical recall alone does not find it.
func TestRecallFindsByMeaning(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	for _, tc := range []struct {
		name string
		opts memory.Options
		want bool
	}{
		{"lexical", memory.Options{}, false},
		{"fused", memory.Options{Embedder: embedder(ai)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := recallOf(t, tc.opts, "how is the dog doing", 6000, puppyTurns()...)
			if got := strings.Contains(memoriesText(r), "Biscuit"); got != tc.want {
				t.Errorf("the puppy recalled: %v, want %v\n%s", got, tc.want, memoriesText(r))
			}
		})
	}
}

// TestEmbeddingInBatches (issue 34): turns are embedded in Maintain once 16 have gathered,
// 128 at most a request, the vectors asked at 256 dimensions; the tokens are charged to
// the meter (all of them, to the chat's person); nothing runs without new turns, nor once
// the day's budget is spent.
func TestEmbeddingInBatches(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	st := storagetest.New()
	mt := &meter{}
	reg := prometheus.NewRegistry()
	m := newMemory(t, st, nil, memory.Options{Embedder: embedder(ai), Meter: mt, Registerer: reg})
	ctx := context.Background()
	for i, tn := range puppyTurns()[:40] {
		tn.User = 7
		commit(t, st, m, 7, tn)
		if err := m.Maintain(ctx, 7); err != nil {
			t.Fatal(err)
		}
		if want := (i + 1) / 16; len(ai.Embeddings()) != want {
			t.Fatalf("after %d turns: %d requests, want %d", i+1, len(ai.Embeddings()), want)
		}
	}
	for _, e := range ai.Embeddings() {
		if len(e.Input) != 16 || e.Dimensions != 256 || e.Model != embedModel {
			t.Errorf("request of %d texts, %d dimensions, model %s", len(e.Input), e.Dimensions, e.Model)
		}
	}
	if err := m.Maintain(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if n := len(ai.Embeddings()); n != 2 {
		t.Errorf("an idle upkeep made a request: %d, want 2", n)
	}
	if got := testutil.ToFloat64(m.MetricsEmbedRequests("turns", "ok")); got != 2 {
		t.Errorf("anima_memory_embedding_requests_total{turns,ok} = %v, want 2", got)
	}
	tokens := testutil.ToFloat64(prometheusCounter(t, reg, "anima_memory_embedding_tokens_total"))
	if tokens == 0 || mt.total() != int(tokens) || mt.charged[7] != int(tokens) {
		t.Errorf("charged %v, endpoint counted %v: want all of it to user 7", mt.charged, tokens)
	}
	// The day's budget spent: the next batch waits.
	mt.spent = true
	for _, tn := range fillers(20) {
		tn.User = 7
		commit(t, st, m, 7, tn)
		if err := m.Maintain(ctx, 7); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ai.Embeddings()); n != 2 {
		t.Errorf("with the budget spent: %d requests, want 2", n)
	}
}

// prometheusCounter is the sum of the named counter's series in reg.
func prometheusCounter(t *testing.T, reg *prometheus.Registry, name string) prometheus.Counter {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "sum"})
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, s := range mf.GetMetric() {
				c.Add(s.GetCounter().GetValue())
			}
		}
	}
	return c
}

// TestEmbeddingsUnavailable (issue 34): an endpoint without the model leaves recall lexical,
// says so once in the log and is not asked again; a failing one is logged once, rests a
// minute (no request, however many replies), and is used again when it answers.
func TestEmbeddingsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T) (*openaitest.Server, *storagetest.Store, *memory.Memory, *braintest.Buffer, *braintest.Clock) {
		ai := openaitest.New(t)
		st := storagetest.New()
		var logs braintest.Buffer
		clk := braintest.NewClock(t0)
		m := newMemory(t, st, nil, memory.Options{Embedder: embedder(ai), Clock: clk,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), RecentTurns: 4})
		return ai, st, m, &logs, clk
	}
	turns := puppyTurns()
	t.Run("no such model", func(t *testing.T) {
		ai, st, m, logs, _ := setup(t)
		ai.SetEmbeddingModels("nomic-embed-text")
		for _, tn := range turns {
			commit(t, st, m, 1, tn)
			if err := m.Maintain(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Recall(ctx, 1, 7, "how is the dog", 6000); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(ai.Embeddings()); n != 1 {
			t.Errorf("%d requests, want 1 (the refusal is for good)", n)
		}
		if n := strings.Count(logs.String(), `msg="no embeddings:`); n != 1 {
			t.Errorf("logged %d times, want once:\n%s", n, logs)
		}
		r, err := m.Recall(ctx, 1, 7, "Biscuit the puppy", 6000)
		if err != nil || !strings.Contains(memoriesText(r), "Biscuit") {
			t.Errorf("lexical recall without embeddings: %v\n%s", err, memoriesText(r))
		}
	})
	t.Run("failing", func(t *testing.T) {
		ai, st, m, logs, clk := setup(t)
		ai.SetEmbeddingStatus(http.StatusServiceUnavailable)
		for _, tn := range turns[:32] {
			commit(t, st, m, 1, tn)
			if err := m.Maintain(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(ai.Embeddings()); n != 1 {
			t.Errorf("%d requests while resting, want 1", n)
		}
		if n := strings.Count(logs.String(), "embeddings failing"); n != 1 {
			t.Errorf("logged %d times, want once:\n%s", n, logs)
		}
		ai.SetEmbeddingStatus(0)
		clk.Advance(time.Minute)
		for _, tn := range turns[32:] {
			commit(t, st, m, 1, tn)
			if err := m.Maintain(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.Contains(logs.String(), "embeddings answer again") {
			t.Errorf("the recovery is not logged:\n%s", logs)
		}
		r, err := m.Recall(ctx, 1, 7, "how is the dog doing", 6000)
		if err != nil || !strings.Contains(memoriesText(r), "Biscuit") {
			t.Errorf("recall by meaning after the endpoint came back: %v\n%s", err, memoriesText(r))
		}
	})
}

// slowEmbedder answers turns at once and never answers a query (it waits for its context).
type slowEmbedder struct{ memory.OpenAIEmbedder }

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, int, error) {
	if len(texts) == 1 {
		<-ctx.Done()
		return nil, 0, ctx.Err()
	}
	return s.OpenAIEmbedder.Embed(ctx, texts)
}

// TestQueryEmbeddingIsBounded (issue 34): a query whose embedding does not come within the
// query timeout is recalled lexically, without waiting longer.
func TestQueryEmbeddingIsBounded(t *testing.T) {
	t.Parallel()
	ai := openaitest.New(t)
	st := storagetest.New()
	m := newMemory(t, st, nil, memory.Options{Embedder: slowEmbedder{embedder(ai)}, QueryTimeout: 50 * time.Millisecond, RecentTurns: 4})
	for _, tn := range puppyTurns() {
		commit(t, st, m, 1, tn)
		if err := m.Maintain(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	r, err := m.Recall(context.Background(), 1, 7, "Biscuit", 6000)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Recall took %v", took)
	}
	if err != nil || !strings.Contains(memoriesText(r), "Biscuit") {
		t.Errorf("lexical recall after the query timed out: %v\n%s", err, memoriesText(r))
	}
	if got := testutil.ToFloat64(m.MetricsEmbedRequests("query", "timeout")); got != 1 {
		t.Errorf("query timeouts = %v, want 1", got)
	}
}

// TestForgetUserErasesVectors (issue 34): a member's /forget removes their turns' vectors
// from the blocks, and after the compaction that follows a /forget their bytes are nowhere
// in the store file; the other member's stay.
func TestForgetUserErasesVectors(t *testing.T) {
	t.Parallel()
	const grp = -300
	ai := openaitest.New(t)
	path := filepath.Join(t.TempDir(), "anima.db")
	st := storagetest.Open(t, path)
	m := newMemory(t, st, nil, memory.Options{Embedder: embedder(ai)})
	for i := range 40 {
		tn := filler(i)
		tn.Role, tn.User, tn.Name = "user", int64(1+i%2), []string{"Ann", "Ben"}[i%2]
		tn.Text = tn.Name + " says: " + tn.Text
		commit(t, st, m, grp, tn)
		if err := m.Maintain(context.Background(), grp); err != nil {
			t.Fatal(err)
		}
	}
	ann, err := m.VectorRecord(grp, 1) // Ann's first turn
	if err != nil || ann == nil {
		t.Fatalf("Ann's vector: %v, %v", ann, err)
	}
	ben, err := m.VectorRecord(grp, 2)
	if err != nil || ben == nil {
		t.Fatalf("Ben's vector: %v, %v", ben, err)
	}
	if _, err := st.ForgetUser(1, unindexer(m)); err != nil {
		t.Fatal(err)
	}
	if got, err := m.VectorRecord(grp, 1); err != nil || got != nil {
		t.Errorf("Ann's vector after her /forget: %v, %v", got, err)
	}
	if _, err := st.Compact(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, ann) {
		t.Error("Ann's vector is still in the store file")
	}
	if !bytes.Contains(raw, ben) {
		t.Error("Ben's vector went with Ann's /forget")
	}
}

// TestQuantizedCosine: the int8 vectors keep the cosine to within 1 %.
func TestQuantizedCosine(t *testing.T) {
	t.Parallel()
	a, _ := openaitest.FakeEmbedding("we went hiking in the mountains with the kids", 256, nil)
	b, _ := openaitest.FakeEmbedding("the kids loved the mountains and the hiking trail", 256, nil)
	var exact float64
	for i := range a {
		exact += float64(a[i]) * float64(b[i])
	}
	if got := memory.Quantize(a, b); math.Abs(got-exact) > 0.01 {
		t.Errorf("quantised cosine %.4f, exact %.4f", got, exact)
	}
}
