package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// runs counts the cognition runs the fake model saw: the requests that start a run (they
// offer tools, unlike memory's summaries, and the last message is not a tool result).
func runs(ai *openaitest.Server) int {
	n := 0
	for _, r := range ai.Requests() {
		if m := r.Body.Messages; len(r.Body.Tools) > 0 && len(m) > 0 && m[len(m)-1].Role != openai.ChatMessageRoleTool {
			n++
		}
	}
	return n
}

// metric reads one sample (name with its labels, as exposed) from the metrics server; -1
// when it is not there.
func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// waitUntil polls cond every 20ms until it holds or ctx ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits until the model has not been asked anything for 1.5 s.
func settle(ctx context.Context, ai *openaitest.Server) {
	n, since := len(ai.Requests()), time.Now()
	for ctx.Err() == nil && time.Since(since) < 1500*time.Millisecond {
		time.Sleep(50 * time.Millisecond)
		if m := len(ai.Requests()); m != n {
			n, since = m, time.Now()
		}
	}
}

// silent is a final answer that says nothing (no message to pace).
func silent() openaitest.Reply { return openaitest.Answer("", "active", 0.9) }

// TestReactionsCostNoRuns: 30 reactions to anima's message within 2 s cost no model run,
// and neither do reactions to a message anima did not send; the next message's run reads
// the latest reaction as data, quoting the message it is on.
func TestReactionsCostNoRuns(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply {
		r := silent()
		r.Delay = 150 * time.Millisecond // a run takes a while: reactions arrive meanwhile
		return r
	})
	ai.Enqueue(openaitest.Answer("hello there", "active", 0.9))
	a := startLogged(t, tg.URL, ai.URL(), telegramtest.DefaultToken, "")
	ctx := waitCtx(t, 40*time.Second)
	userMsg := tg.NextMessageID()
	m := telegramtest.TextMessage(user, user, "private", "hi")
	m.ID = userMsg
	tg.PushMessage(m)
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	mine := sent[0].ID
	settle(ctx, ai) // the turn ends: anima has noted the message it sent
	before := runs(ai)

	// Reactions to the user's own message (not anima's) wake nothing.
	for range 5 {
		tg.PushReaction(user, user, userMsg, "👍")
	}
	began := time.Now()
	var last int64
	emojis := []string{"❤", "👍", "🔥", "🥰"}
	for i := range 30 {
		last = tg.PushReaction(user, user, mine, emojis[(29-i)%4]) // the last one is ❤
		time.Sleep(66 * time.Millisecond)
	}
	t.Logf("30 reactions pushed in %v", time.Since(began).Round(10*time.Millisecond))
	if err := tg.WaitPollOffset(ctx, last+1); err != nil {
		t.Fatal(err)
	}
	settle(ctx, ai)
	got := runs(ai) - before
	t.Logf("model runs for 30 reactions in 2s: %d", got)
	if got != 0 {
		t.Errorf("%d model runs for 30 reactions to anima's message, want 0", got)
	}
	if v := metric(t, a.metrics, `anima_telegram_updates_total{kind="reaction_other"}`); v != 5 {
		t.Errorf("reactions to other messages counted %v, want 5", v)
	}
	if v := metric(t, a.metrics, `anima_reactions_dropped_total`); v != 10 {
		t.Errorf("anima_reactions_dropped_total = %v, want 10 (the chat keeps its latest 20 of 30)", v)
	}

	tg.PushText(user, user, "so, tonight?")
	waitUntil(t, ctx, "the next message's run", func() bool { return runs(ai) == before+1 })
	reqs := ai.Requests()
	var sys string
	for i := len(reqs) - 1; i >= 0 && sys == ""; i-- {
		if len(reqs[i].Body.Tools) > 0 {
			sys = reqs[i].Body.Messages[0].Content
		}
	}
	// Each reaction line starts with when it came ("- [just now] reacted …").
	if want := `] reacted "❤" to your message "hello there"` + "\n"; !strings.Contains(sys, want) || strings.Count(sys, "] reacted") != 1 {
		t.Errorf("the run's system prompt does not read the latest reaction %q once:\n%s", want, sys)
	}
}

// greedy is a model that answers every run with 12 core_schedule calls, then silence.
func greedy(req openai.ChatCompletionRequest) openaitest.Reply {
	if len(req.Tools) == 0 {
		return openaitest.Reply{Content: "a summary"} // memory folding old turns
	}
	if m := req.Messages; m[len(m)-1].Role == openai.ChatMessageRoleTool {
		return silent()
	}
	var r openaitest.Reply
	for i := range 12 {
		r.ToolCalls = append(r.ToolCalls, openaitest.Call{Name: "core_schedule", Args: fmt.Sprintf(
			`{"note":"water the plants %d","delay_seconds":%d,"at":null,"cron":null,"kind":"reminder","reason":null}`, i, 86400+i*60)})
	}
	return r
}

// greedyTurns sends n messages, each once the previous run is over, so every one is its
// own run, and returns when the last run has ended.
func greedyTurns(t *testing.T, ctx context.Context, tg *telegramtest.Server, ai *openaitest.Server, n int) {
	t.Helper()
	base := runs(ai)
	for i := range n {
		tg.PushText(user, user, fmt.Sprintf("remind me of everything, take %d", i))
		waitUntil(t, ctx, fmt.Sprintf("run %d", i+1), func() bool {
			reqs := ai.Requests()
			for j := len(reqs) - 1; j >= 0; j-- {
				if len(reqs[j].Body.Tools) > 0 { // the last request of a run (not a summary)
					m := reqs[j].Body.Messages
					return runs(ai) == base+i+1 && m[len(m)-1].Role == openai.ChatMessageRoleTool
				}
			}
			return false
		})
	}
}

// TestGreedyModelCannotPileUpReminders: 60 turns of a model that schedules 12 reminders
// each leave at most 50 pending (4 a run), and /reminders answers in one message.
func TestGreedyModelCannotPileUpReminders(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(greedy)
	// The per-user rate limit would stretch 60 quick turns over three minutes.
	a := startLogged(t, tg.URL, ai.URL(), telegramtest.DefaultToken, "limits: {user_runs_per_minute: 0}\n")
	ctx := waitCtx(t, 180*time.Second)
	greedyTurns(t, ctx, tg, ai, 60)
	time.Sleep(500 * time.Millisecond) // the last turn commits
	pending := metric(t, a.metrics, "anima_schedules_pending")
	t.Logf("pending reminders after 60 greedy turns: %v", pending)
	if pending != 50 {
		t.Errorf("%v reminders pending, want the cap of 50", pending)
	}
	perRun := metric(t, a.metrics, `anima_limits_refused_total{limit="reminders_per_run"}`)
	perChat := metric(t, a.metrics, `anima_limits_refused_total{limit="pending_reminders"}`)
	t.Logf("refused: %v per run, %v per chat", perRun, perChat)
	if perRun < 12*8 || perRun+perChat != 60*12-50 {
		t.Errorf("refusals: %v per run + %v per chat, want %d in all", perRun, perChat, 60*12-50)
	}
	// The tool told the model why.
	var told bool
	for _, r := range ai.Requests() {
		told = told || strings.Contains(string(r.Raw), "at most 4 new reminders")
	}
	if !told {
		t.Error("no tool result told the model why its reminder was refused")
	}
}

// TestRemindersListIsOnePage: with 120 pending (caps raised), /reminders answers in one
// message, paged.
func TestRemindersListIsOnePage(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(greedy)
	a := startLogged(t, tg.URL, ai.URL(), telegramtest.DefaultToken, `limits:
  pending_reminders_per_chat: 500
  reminders_per_run: 12
`)
	ctx := waitCtx(t, 60*time.Second)
	greedyTurns(t, ctx, tg, ai, 10)
	waitUntil(t, ctx, "120 pending", func() bool { return metric(t, a.metrics, "anima_schedules_pending") == 120 })
	tg.PushText(user, user, "/reminders")
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // further parts would come now (one a second)
	n := len(tg.Sent())
	t.Logf("/reminders with 120 pending sent %d message(s)", n)
	if n != 1 {
		t.Errorf("/reminders sent %d messages, want 1", n)
	}
	if !strings.Contains(sent[0].Visible, "and 100 more") || !strings.Contains(sent[0].Visible, "/reminders 2") {
		t.Errorf("first page does not say how to see the rest:\n%s", sent[0].Visible)
	}
	tg.PushText(user, user, "/reminders 6")
	sent, err = tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := sent[1].Visible; strings.Contains(got, "more —") || strings.Count(got, "\n• ") != 20 {
		t.Errorf("last page:\n%s", got)
	}
}

// TestUserRateLimit: 60 messages spread over a minute from one user cost at most the
// rate limit's runs (20 a minute) plus the one the excess is folded into, and one notice.
func TestUserRateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a minute")
	}
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return silent() })
	a := startLogged(t, tg.URL, ai.URL(), telegramtest.DefaultToken, "")
	ctx := waitCtx(t, 120*time.Second)
	began := time.Now()
	var last int64
	for i := range 60 {
		last = tg.PushText(user, user, fmt.Sprintf("message %d", i))
		time.Sleep(time.Until(began.Add(time.Duration(i+1) * time.Second)))
	}
	if err := tg.WaitPollOffset(ctx, last+1); err != nil {
		t.Fatal(err)
	}
	// The excess folded into the next allowed run: it comes once the minute is over.
	waitUntil(t, ctx, "the folded run", func() bool {
		for _, r := range ai.Requests() {
			if len(r.Body.Tools) > 0 && strings.Contains(string(r.Raw), "message 59") {
				return true
			}
		}
		return false
	})
	time.Sleep(time.Second)
	got := runs(ai)
	t.Logf("runs for 60 messages over a minute: %d", got)
	if got > 22 {
		t.Errorf("%d runs, want at most 20 a minute plus the folded one", got)
	}
	var notices int
	for _, m := range tg.Sent() {
		if strings.Contains(m.Visible, "faster than I can think") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d rate-limit notices, want 1", notices)
	}
	if v := metric(t, a.metrics, `anima_limits_refused_total{limit="user_runs"}`); v < 1 {
		t.Errorf("user_runs refusals = %v", v)
	}
}

// TestUserTokenShare: once a user has spent their daily share, their messages get one
// plain notice and no model run — also after a restart.
func TestUserTokenShare(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		r := openaitest.Echo(req)
		r.PromptTokens, r.CompletionTokens = 900, 100
		return r
	})
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	if err := appendFile(path, "  daily_user_token_budget: 1500\n", "llm:\n"); err != nil {
		t.Fatal(err)
	}
	ctx := waitCtx(t, 60*time.Second)
	p := start(t, "run", "--config", path)
	for i, text := range []string{"one", "two", "three"} {
		tg.PushText(user, user, text)
		if _, err := tg.WaitSent(ctx, i+1); err != nil {
			t.Fatal(err)
		}
	}
	p.stop(t)
	p = start(t, "run", "--config", path)
	id := tg.PushText(user, user, "four")
	if err := tg.WaitPollOffset(ctx, id+1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	p.stop(t)
	sent := tg.Sent()
	if n := len(ai.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (the share of 1500 tokens is spent by the second)", n)
	}
	if len(sent) != 3 || !strings.Contains(sent[2].Visible, "today") {
		t.Errorf("messages: %+v, want two answers and one notice", sent)
	}
}

// appendFile inserts text after the first line equal to after (with its newline) in the
// file at path.
func appendFile(path, text, after string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := strings.Replace(string(b), after, after+text, 1)
	return os.WriteFile(path, []byte(s), 0o600)
}

// TestReactionSurvivesRestart: a reaction no run has read yet stays in the store's inbox
// over a restart; the first run after it reads the reaction, quoting the message it is on.
func TestReactionSurvivesRestart(t *testing.T) {
	tg := telegramtest.New(t)
	ai := openaitest.New(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, tg.URL, ai.URL(), "")
	p := start(t, "run", "--config", path)
	ctx := waitCtx(t, 60*time.Second)
	tg.PushText(user, user, "hi")
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	settle(ctx, ai)
	before := runs(ai)
	if err := tg.WaitPollOffset(ctx, tg.PushReaction(user, user, sent[0].ID, "❤")+1); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	if got := runs(ai) - before; got != 0 {
		t.Errorf("%d model runs for the reaction, want 0", got)
	}

	p = start(t, "run", "--config", path)
	tg.PushText(user, user, "still there?")
	if _, err := tg.WaitSent(ctx, 2); err != nil {
		t.Fatalf("no answer after the restart: %v", err)
	}
	p.stop(t)
	reqs := ai.Requests()
	var sys string
	for i := len(reqs) - 1; i >= 0 && sys == ""; i-- {
		if len(reqs[i].Body.Tools) > 0 {
			sys = reqs[i].Body.Messages[0].Content
		}
	}
	if want := `] reacted "❤" to your message "echo: hi"`; !strings.Contains(sys, want) {
		t.Errorf("the first run after the restart does not read the reaction %q:\n%s", want, sys)
	}
}
