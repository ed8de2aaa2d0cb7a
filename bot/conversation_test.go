package bot_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestLongConversationCost runs a 100-turn scripted conversation over the console
// channel and reports the model calls and prompt tokens per turn: the prompt must not
// grow with the conversation, and old turns are folded into a summary now and then (about
// every 17 turns: six folds by turn 100; 200 turns showed the same prompt size, twice
// the folds, in twice the time).
func TestLongConversationCost(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("100 turns")
	}
	h := newHarness(t) // its Telegram side stays unused: anima runs over the console
	ai := h.ai
	summaries := 0
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if len(req.Tools) == 0 && strings.Contains(req.Messages[0].Content, "summar") {
			summaries++
			return openaitest.Reply{Content: "They talked about boats, the weather and a trip to Lisbon."}
		}
		return openaitest.Echo(req)
	})
	cfg := h.cfg
	cfg.Metrics.Listen = ""

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- bot.Run(ctx, cfg, bot.Options{Console: true, In: inR, Out: outW})
		_ = outW.Close()
	}()
	replies := bufio.NewScanner(outR)

	const turns = 100
	tokensAt := map[int]int{}
	callsBefore := 0
	for i := 1; i <= turns; i++ {
		line := fmt.Sprintf("turn %d: today I sanded the hull of my boat number %d and thought about Lisbon", i, i)
		if _, err := fmt.Fprintln(inW, line); err != nil {
			t.Fatal(err)
		}
		if !replies.Scan() {
			t.Fatalf("no reply to turn %d: %v", i, replies.Err())
		}
		if want := "echo: " + line; !strings.HasSuffix(replies.Text(), want) {
			t.Fatalf("turn %d: reply %q", i, replies.Text())
		}
		reqs := ai.Requests()
		for _, r := range reqs[callsBefore:] {
			if len(r.Body.Tools) > 0 { // the cognition call, not a summary
				tokensAt[i] = len(r.Raw) / 4
			}
		}
		callsBefore = len(reqs)
	}
	_ = inW.Close()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("anima chat did not stop after input ended")
	}
	total := len(ai.Requests())
	t.Logf("%d turns: %d model calls (%.2f per turn; %d of them summaries), prompt ≈ %d tokens at turn 30, %d at turn 60, %d at turn %d",
		turns, total, float64(total)/turns, summaries, tokensAt[30], tokensAt[60], tokensAt[turns], turns)
	if summaries == 0 {
		t.Errorf("%d turns were never summarised", turns)
	}
	if float64(total)/turns > 1.2 {
		t.Errorf("%.2f model calls per turn", float64(total)/turns)
	}
	if tokensAt[turns] > tokensAt[30]*11/10 {
		t.Errorf("prompt grew from %d tokens at turn 30 to %d at turn %d", tokensAt[30], tokensAt[turns], turns)
	}
}
