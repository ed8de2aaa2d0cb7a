package cognition_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/prompt"
)

// promptTokens is what a recorded request weighs against ContextTokens: its messages and
// its tool definitions.
func promptTokens(req openai.ChatCompletionRequest) int {
	n := prompt.EstimateTokens(req.Messages)
	for _, tl := range req.Tools {
		n += 8 + (len(tl.Function.Name)+3)/4 + (len(tl.Function.Description)+3)/4
		raw, _ := json.Marshal(tl.Function.Parameters)
		n += (len(raw) + 3) / 4
	}
	return n
}

func TestPromptStaysFlatWithHistory(t *testing.T) {
	const budget = 6000
	sizes := map[int]int{}
	var prompts = map[int]openai.ChatCompletionRequest{}
	for _, n := range []int{30, 1000} {
		e := newEnv(t, setup{mem: &fakeMemory{rc: braintest.Recall(n)}, cfg: func(c *cognition.Config) { c.ContextTokens = budget }})
		e.srv.Enqueue(openaitest.Answer("ok", "active", 0.9))
		think(t, e, userWake("how are you?"))
		req := e.srv.Requests()[0].Body
		prompts[n] = req
		sizes[n] = promptTokens(req)
		t.Logf("%4d turns of history: prompt ≈ %d tokens in %d messages (budget %d)", n, sizes[n], len(req.Messages), budget)
		if sizes[n] > budget {
			t.Errorf("%d turns: prompt ≈ %d tokens, over the budget of %d", n, sizes[n], budget)
		}
	}
	if sizes[1000] > sizes[30] {
		t.Errorf("prompt grew with history: %d tokens for 1000 turns > %d for 30", sizes[1000], sizes[30])
	}

	req := prompts[1000]
	all := braintest.PromptText(req.Messages)
	braintest.CheckText(t, "1000-turn prompt", all, []string{"turn-0999", "a cat named Miso", "<untrusted>", "Sam said the job starts in April"}, nil)
	if strings.Contains(all, "turn-0000 ") {
		t.Error("1000-turn prompt still holds the oldest turn")
	}
	if strings.Count(all, "</untrusted>") != 1 {
		t.Errorf("memory text closed the untrusted block: %d closing tags", strings.Count(all, "</untrusted>"))
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role != "user" || last.Content != "how are you?" {
		t.Errorf("last message = %+v", last)
	}
	// Turns keep their order and roles, each after the mark of its time.
	var seqs []string
	for _, m := range req.Messages {
		if _, text, ok := strings.Cut(m.Content, "] "); ok && strings.HasPrefix(text, "turn-") {
			seqs = append(seqs, m.Role+":"+text[:9])
		}
	}
	if len(seqs) < 2 || seqs[len(seqs)-1] != "assistant:turn-0999" || seqs[len(seqs)-2] != "user:turn-0998" {
		t.Errorf("turns = %v", seqs)
	}
}

// update rewrites the request golden files: go test ./brain/cognition -run RequestGolden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name byte for byte (or writes it with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	braintest.Golden(t, name, got, *update)
}

// TestRequestGolden pins the wire bytes of a run's requests: a tool-calling step, the step
// after it, an escalation to the smart model and the forced final answer of a spent step
// budget.
func TestRequestGolden(t *testing.T) {
	memo := &memoTool{name: "test_memo", effects: true}
	e := newEnv(t, setup{tools: []brain.Tool{memo}, mem: &fakeMemory{rc: braintest.Recall(6)}, cfg: func(c *cognition.Config) {
		c.MaxIterations = 3
		c.ContextTokens = 3000
	}})
	e.srv.Enqueue(
		openaitest.Tool("test_memo", `{"note":"exam on Monday","tag":null}`),
		openaitest.Tool(cognition.ToolEscalate, `{"reason":"careful"}`),
		openaitest.Tool("test_memo", `{"note":"again","tag":"x"}`).ForModel(smart),
		openaitest.Answer("Good luck on Monday!", "awaiting_answer", 0.9).ForModel(smart),
	)
	out := think(t, e, userWake("my exam is on Monday"))
	wantSent(t, out, "Good luck on Monday!")
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	var b bytes.Buffer
	for i, r := range reqs {
		fmt.Fprintf(&b, "--- request %d\n", i)
		if err := json.Indent(&b, r.Raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
	}
	golden(t, "requests-tool-escalate-forced.txt", b.Bytes())
	if last := reqs[3].Body; len(last.Tools) != 0 || last.Messages[len(last.Messages)-1].Role != openai.ChatMessageRoleSystem {
		t.Errorf("the last request is not a forced answer")
	}
}
