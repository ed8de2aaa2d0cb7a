package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/storage"
)

// Options say how to run the bench.
type Options struct {
	// BudgetTokens is Recall's budget, the prompt's (llm.context_tokens).
	BudgetTokens int
	// K, when above 0, also asks Search for each question's top K (recall@K).
	K int
	// Dir is where each conversation's temporary store is made (default os.TempDir()).
	Dir string
	// Embedder, when set, embeds the turns and questions as the service does with
	// llm.embedding_model (Recall fuses both rankings); the report counts its requests.
	Embedder memory.Embedder
}

// Run writes each conversation into a fresh store of its own and asks it its questions.
// Conversations are reported under their Name; two with the same Name are an error.
func Run(ctx context.Context, convs []Conversation, opts Options) (Report, error) {
	r := newReport(opts)
	if opts.Embedder != nil {
		r.Embedding = &counting{Embedder: opts.Embedder}
		opts.Embedder = r.Embedding
	}
	for _, c := range convs {
		if _, dup := r.Conversations[c.Name]; dup {
			return r, fmt.Errorf("two conversations named %s", c.Name)
		}
		if err := r.run(ctx, c, opts); err != nil {
			return r, fmt.Errorf("conversation %s: %w", c.Name, err)
		}
	}
	r.finish()
	return r, nil
}

// run writes c into a temporary store, asks its questions and adds them to r.
func (r *Report) run(ctx context.Context, c Conversation, opts Options) (err error) {
	dir, err := os.MkdirTemp(opts.Dir, "anima-bench-")
	if err != nil {
		return fmt.Errorf("temporary store: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(dir); err == nil && rerr != nil {
			err = fmt.Errorf("remove temporary store: %w", rerr)
		}
	}()
	st, err := storage.Open(filepath.Join(dir, "anima.db"), storage.Options{})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	clk := &clock{}
	// No summarizer: a summary is a model's, and the bench calls none.
	// Speaker B is anima, by the name it has in the conversation (persona.name).
	mem, err := memory.New(st, nil, memory.Options{Clock: clk, Name: c.SpeakerB, Embedder: opts.Embedder})
	if err != nil {
		return err
	}
	start := time.Now()
	s, err := write(ctx, st, mem, clk, c)
	if err != nil {
		return err
	}
	r.Written += time.Since(start)
	sp, err := st.Space()
	if err != nil {
		return err
	}
	r.Conversations[c.Name] = &Figures{Turns: s.n, StoreBytes: sp.FileBytes}
	r.order = append(r.order, c.Name)
	start = time.Now()
	for _, q := range c.QA {
		a, ok, err := ask(ctx, mem, s, q, opts.BudgetTokens, opts.K)
		if err != nil {
			return err
		}
		if !ok {
			r.Unjudged++
			continue
		}
		r.add(c.Name, strconv.Itoa(a.category), a)
	}
	r.Asked += time.Since(start)
	return nil
}

// counting is an Embedder that counts its requests, texts and tokens.
type counting struct {
	memory.Embedder `json:"-"`
	mu              sync.Mutex
	Requests        int `json:"requests"`
	Failed          int `json:"failed"`
	Texts           int `json:"texts"`
	Tokens          int `json:"tokens"`
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, int, error) {
	vecs, tokens, err := c.Embedder.Embed(ctx, texts)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Requests++
	c.Texts += len(texts)
	c.Tokens += tokens
	if err != nil {
		c.Failed++
	}
	return vecs, tokens, err
}

// Estimate is what an Embedder would be asked for the conversations, at most: a request
// for every 16 turns (the upkeep's batches) and one for each question, and their tokens
// (4 characters a token).
func Estimate(convs []Conversation) (requests, tokens int) {
	for _, c := range convs {
		n := 0
		for _, s := range c.Sessions {
			for _, l := range s.Turns {
				n++
				tokens += (len(l.Text) + 3) / 4
			}
		}
		requests += n / 16
		for _, q := range c.QA {
			requests++
			tokens += (len(q.Question) + 3) / 4
		}
	}
	return requests, tokens
}
