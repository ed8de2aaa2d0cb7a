package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestEmbeddingsCountInTheShare (issue 34): with llm.embedding_model set, the turns are
// embedded after the replies (256 dimensions for text-embedding-3-small), and what that
// costs counts in the person's share: the runs alone leave it unspent, the embeddings
// spend it, and the next message gets the notice.
func TestEmbeddingsCountInTheShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.useClock(testNoon())
	h.ai.SetDefault(openaitest.EchoCosting(1, 1)) // 2 tokens a run: 18 for nine runs
	h.cfg.LLM.EmbeddingModel = "text-embedding-3-small"
	h.cfg.LLM.DailyUserTokenBudget = 40
	ctx := testCtx(t, 60*time.Second)
	addrs, stop := h.start()
	defer stop()
	for i := range 8 { // 16 turns: one batch
		h.tg.PushText(user, user, fmt.Sprintf("message %d about gardens, tomatoes and the rain", i))
		if _, err := h.tg.WaitSent(ctx, i+1); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, ctx, "the turns embedded", func() bool { return len(h.ai.Embeddings()) == 1 })
	e := h.ai.Embeddings()[0]
	if e.Model != "text-embedding-3-small" || e.Dimensions != 256 || len(e.Input) != 16 {
		t.Errorf("embedding request: model %s, %d dimensions, %d texts", e.Model, e.Dimensions, len(e.Input))
	}
	waitUntil(t, ctx, "the tokens counted", func() bool {
		return metricSample(t, addrs.Metrics, `anima_memory_embedding_tokens_total{purpose="turns"}`) > 40
	})
	h.tg.PushText(user, user, "are you there?")
	sent, err := h.tg.WaitSent(ctx, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent[8].Visible, "today") {
		t.Errorf("after the embeddings spent the share: %q, want the notice", sent[8].Visible)
	}
}
