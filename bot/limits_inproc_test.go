package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/brain/schedule"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
	"github.com/anima-bot/anima/storage"
)

// The limits' behaviour checks, moved in-process from cmd/anima's limits_test.go: each
// runs bot.Run on the manual clock, so a minute of rate limit is an Advance, not a wait.

// inprocRuns counts the cognition runs the fake model saw: the requests that start a run
// (they offer tools, unlike memory's summaries, and the last message is not a tool
// result).
func inprocRuns(ai *openaitest.Server) int {
	n := 0
	for _, r := range ai.Requests() {
		if m := r.Body.Messages; len(r.Body.Tools) > 0 && len(m) > 0 && m[len(m)-1].Role != openai.ChatMessageRoleTool {
			n++
		}
	}
	return n
}

// limitsSilent is a final answer that says nothing (no message to pace).
func limitsSilent() openaitest.Reply { return openaitest.Answer("", "active", 0.9) }

// lastRunSystem is the system messages of the last request that offered tools (a run's),
// joined: persona, brief, data blocks and the ask.
func lastRunSystem(ai *openaitest.Server) string {
	reqs := ai.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if len(reqs[i].Body.Tools) > 0 {
			var parts []string
			for _, m := range reqs[i].Body.Messages {
				if m.Role == "system" {
					parts = append(parts, m.Content)
				}
			}
			return strings.Join(parts, "\n\n")
		}
	}
	return ""
}

// TestReactionsCostNoRuns: 30 reactions to anima's message within 2 s cost no model run,
// and neither do reactions to a message anima did not send; the next message's run reads
// the latest reaction as data, quoting the message it is on.
func TestReactionsCostNoRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	clock := h.useClock(testNoon())
	h.ai.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply {
		r := limitsSilent()
		r.Delay = 150 * time.Millisecond // a run takes a while: reactions arrive meanwhile
		return r
	})
	h.ai.Enqueue(openaitest.Answer("hello there", "active", 0.9))
	addrs := h.run()
	ctx := testCtx(t, 40*time.Second)
	userMsg := h.tg.NextMessageID()
	m := telegramtest.TextMessage(user, user, "private", "hi")
	m.ID = userMsg
	h.tg.PushMessage(m)
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	mine := sent[0].ID
	modelQuiet(t, ctx, h.ai, addrs.Metrics) // the turn ends: anima has noted the message it sent
	before := inprocRuns(h.ai)

	// Reactions to the user's own message (not anima's) wake nothing.
	for range 5 {
		h.tg.PushReaction(user, user, userMsg, "👍")
	}
	// 30 reactions 66 ms apart on anima's clock, each taken by the channel before the next.
	emojis := []string{"❤", "👍", "🔥", "🥰"}
	for i := range 30 {
		last := h.tg.PushReaction(user, user, mine, emojis[(29-i)%4]) // the last one is ❤
		if err := h.tg.WaitPollOffset(ctx, last+1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(66 * time.Millisecond)
	}
	modelQuiet(t, ctx, h.ai, addrs.Metrics)
	got := inprocRuns(h.ai) - before
	t.Logf("model runs for 30 reactions in 2s: %d", got)
	if got != 0 {
		t.Errorf("%d model runs for 30 reactions to anima's message, want 0", got)
	}
	if v := metricSample(t, addrs.Metrics, `anima_telegram_updates_total{kind="reaction_other"}`); v != 5 {
		t.Errorf("reactions to other messages counted %v, want 5", v)
	}
	if v := metricSample(t, addrs.Metrics, `anima_reactions_dropped_total`); v != 10 {
		t.Errorf("anima_reactions_dropped_total = %v, want 10 (the chat keeps its latest 20 of 30)", v)
	}

	h.tg.PushText(user, user, "so, tonight?")
	waitUntil(t, ctx, "the next message's run", func() bool { return inprocRuns(h.ai) == before+1 })
	sys := lastRunSystem(h.ai)
	// Each reaction line starts with when it came ("- [just now] reacted …").
	if want := `] reacted "❤" to your message "hello there"` + "\n"; !strings.Contains(sys, want) || strings.Count(sys, "] reacted") != 1 {
		t.Errorf("the run's system prompt does not read the latest reaction %q once:\n%s", want, sys)
	}
}

// limitsGreedy is a model that answers every run with 12 core_schedule calls, then
// silence.
func limitsGreedy(req openai.ChatCompletionRequest) openaitest.Reply {
	if len(req.Tools) == 0 {
		return openaitest.Reply{Content: "a summary"} // memory folding old turns
	}
	if m := req.Messages; m[len(m)-1].Role == openai.ChatMessageRoleTool {
		return limitsSilent()
	}
	var r openaitest.Reply
	for i := range 12 {
		r.ToolCalls = append(r.ToolCalls, openaitest.Call{Name: "core_schedule", Args: fmt.Sprintf(
			`{"note":"water the plants %d","delay_seconds":%d,"at":null,"cron":null,"kind":"reminder","reason":null}`, i, 86400+i*60)})
	}
	return r
}

// limitsGreedyTurns sends n messages, each once the previous run is over, so every one is
// its own run, and returns when the last run has ended.
func limitsGreedyTurns(t *testing.T, ctx context.Context, h *harness, n int) {
	t.Helper()
	base := inprocRuns(h.ai)
	for i := range n {
		h.tg.PushText(user, user, fmt.Sprintf("remind me of everything, take %d", i))
		waitUntil(t, ctx, fmt.Sprintf("run %d", i+1), func() bool {
			reqs := h.ai.Requests()
			for j := len(reqs) - 1; j >= 0; j-- {
				if len(reqs[j].Body.Tools) > 0 { // the last request of a run (not a summary)
					m := reqs[j].Body.Messages
					return inprocRuns(h.ai) == base+i+1 && m[len(m)-1].Role == openai.ChatMessageRoleTool
				}
			}
			return false
		})
	}
}

// TestGreedyModelCannotPileUpReminders: 6 turns of a model that schedules 12 reminders
// each leave at most limits.pending_reminders_per_chat pending (10 here; the default 50
// took 60 turns to show the same), 4 a run (limits.reminders_per_run), and the tool tells
// the model why.
func TestGreedyModelCannotPileUpReminders(t *testing.T) {
	t.Parallel()
	const turns, perChat, perRun = 6, 10, 4
	h := newHarness(t)
	h.useClock(testNoon()) // the reminders, a day away, never come due
	h.ai.SetDefault(limitsGreedy)
	h.cfg.Limits.PendingRemindersPerChat = perChat
	h.cfg.Limits.RemindersPerRun = perRun
	addrs := h.run()
	ctx := testCtx(t, 120*time.Second)
	limitsGreedyTurns(t, ctx, h, turns)
	modelQuiet(t, ctx, h.ai, addrs.Metrics) // the last turn commits
	pending := metricSample(t, addrs.Metrics, "anima_schedules_pending")
	t.Logf("pending reminders after %d greedy turns: %v", turns, pending)
	if pending != perChat {
		t.Errorf("%v reminders pending, want the cap of %d", pending, perChat)
	}
	byRun := metricSample(t, addrs.Metrics, `anima_limits_refused_total{limit="reminders_per_run"}`)
	byChat := metricSample(t, addrs.Metrics, `anima_limits_refused_total{limit="pending_reminders"}`)
	t.Logf("refused: %v per run, %v per chat", byRun, byChat)
	// Each turn that fits under the cap whole has 12-4 refused by the per-run limit.
	if byRun < perChat/perRun*(12-perRun) || byRun+byChat != turns*12-perChat {
		t.Errorf("refusals: %v per run + %v per chat, want %d in all", byRun, byChat, turns*12-perChat)
	}
	// The tool told the model why.
	var told bool
	for _, r := range h.ai.Requests() {
		told = told || strings.Contains(string(r.Raw), fmt.Sprintf("at most %d new reminders", perRun))
	}
	if !told {
		t.Error("no tool result told the model why its reminder was refused")
	}
}

// TestRemindersListIsOnePage: with 120 pending (caps raised; put in the store before the
// start, as 10 turns of limitsGreedy would leave them, without the turns), /reminders
// answers in one message, paged.
func TestRemindersListIsOnePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	now := testNoon()
	h.useClock(now)
	h.cfg.Limits.PendingRemindersPerChat = 500
	st, err := storage.Open(h.cfg.Storage.Path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	book := schedule.New(st, schedule.Options{MaxPending: -1})
	for i := range 120 {
		item := brain.ScheduleItem{ID: schedule.NewID(), Chat: user, User: user, Note: fmt.Sprintf("water the plants %d", i),
			Due: now.Add(24*time.Hour + time.Duration(i)*time.Minute), Created: now, Kind: brain.KindReminder}
		if err := book.Add(item); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	addrs := h.run()
	ctx := testCtx(t, 60*time.Second)
	waitUntil(t, ctx, "120 pending", func() bool { return metricSample(t, addrs.Metrics, "anima_schedules_pending") == 120 })
	h.tg.PushText(user, user, "/reminders")
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := len(h.settled(addrs.Metrics)) // further parts would come now (one a second)
	t.Logf("/reminders with 120 pending sent %d message(s)", n)
	if n != 1 {
		t.Errorf("/reminders sent %d messages, want 1", n)
	}
	if !strings.Contains(sent[0].Visible, "and 100 more") || !strings.Contains(sent[0].Visible, "/reminders 2") {
		t.Errorf("first page does not say how to see the rest:\n%s", sent[0].Visible)
	}
	h.tg.PushText(user, user, "/reminders 6")
	sent, err = h.tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := sent[1].Visible; strings.Contains(got, "more —") || strings.Count(got, "\n• ") != 20 {
		t.Errorf("last page:\n%s", got)
	}
}

// TestUserRateLimit: 15 messages spread over a minute from one user cost at most the
// rate limit's runs (limits.user_runs_per_minute, 5 here: the default 20 would take 60
// messages to show the same) plus the one the excess is folded into, and one notice.
// The minute is anima's clock: a message every 4 s, each taken by the loop before the
// next (and, while runs are allowed, its run over), as a person typing would.
func TestUserRateLimit(t *testing.T) {
	t.Parallel()
	const perMinute, messages = 5, 15
	h := newHarness(t)
	clock := h.useClock(testNoon())
	h.cfg.Limits.UserRunsPerMinute = perMinute
	h.ai.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return limitsSilent() })
	addrs := h.run()
	ctx := testCtx(t, 120*time.Second)
	for i := range messages {
		h.tg.PushText(user, user, fmt.Sprintf("message %d", i))
		waitUntil(t, ctx, fmt.Sprintf("message %d taken", i), func() bool {
			return metricSample(t, addrs.Metrics, `anima_signals_total{type="user_message"}`) == float64(i+1)
		})
		if i < perMinute {
			waitUntil(t, ctx, fmt.Sprintf("run %d", i+1), func() bool { return inprocRuns(h.ai) == i+1 })
		}
		clock.Advance(time.Minute / messages)
	}
	// The excess folded into the next allowed run: it comes once the minute is over.
	clock.Advance(2 * time.Second)
	waitUntil(t, ctx, "the folded run", func() bool {
		for _, r := range h.ai.Requests() {
			if len(r.Body.Tools) > 0 && strings.Contains(string(r.Raw), fmt.Sprintf("message %d", messages-1)) {
				return true
			}
		}
		return false
	})
	modelQuiet(t, ctx, h.ai, addrs.Metrics)
	got := inprocRuns(h.ai)
	t.Logf("runs for %d messages over a minute: %d", messages, got)
	if got > perMinute+2 {
		t.Errorf("%d runs, want at most %d a minute plus the folded one", got, perMinute)
	}
	var notices int
	for _, m := range h.tg.Sent() {
		if strings.Contains(m.Visible, "faster than I can think") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d rate-limit notices, want 1", notices)
	}
	if v := metricSample(t, addrs.Metrics, `anima_limits_refused_total{limit="user_runs"}`); v < 1 {
		t.Errorf("user_runs refusals = %v", v)
	}
}

// TestUserTokenShare: once a user has spent their daily share, their messages get one
// plain notice and no model run — also after a restart (bot.Run stopped and started
// again on the same store).
func TestUserTokenShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.useClock(testNoon())
	h.ai.SetDefault(openaitest.EchoCosting(900, 100))
	h.cfg.LLM.DailyUserTokenBudget = 1500
	ctx := testCtx(t, 60*time.Second)
	_, stop := h.start()
	for i, text := range []string{"one", "two", "three"} {
		h.tg.PushText(user, user, text)
		if _, err := h.tg.WaitSent(ctx, i+1); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	addrs, stop := h.start()
	id := h.tg.PushText(user, user, "four")
	if err := h.tg.WaitPollOffset(ctx, id+1); err != nil {
		t.Fatal(err)
	}
	modelQuiet(t, ctx, h.ai, addrs.Metrics) // a model call or a message would come now
	stop()
	sent := h.tg.Sent()
	if n := len(h.ai.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (the share of 1500 tokens is spent by the second)", n)
	}
	if len(sent) != 3 || !strings.Contains(sent[2].Visible, "today") {
		t.Errorf("messages: %+v, want two answers and one notice", sent)
	}
}

// TestReactionSurvivesRestart: a reaction no run has read yet stays in the store's inbox
// over a restart (bot.Run stopped and started again on the same store, as SIGTERM does);
// the first run after it reads the reaction, quoting the message it is on.
func TestReactionSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.useClock(testNoon())
	addrs, stop := h.start()
	ctx := testCtx(t, 60*time.Second)
	h.tg.PushText(user, user, "hi")
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	modelQuiet(t, ctx, h.ai, addrs.Metrics)
	before := inprocRuns(h.ai)
	if err := h.tg.WaitPollOffset(ctx, h.tg.PushReaction(user, user, sent[0].ID, "❤")+1); err != nil {
		t.Fatal(err)
	}
	stop()
	if got := inprocRuns(h.ai) - before; got != 0 {
		t.Errorf("%d model runs for the reaction, want 0", got)
	}

	_, stop = h.start()
	h.tg.PushText(user, user, "still there?")
	if _, err := h.tg.WaitSent(ctx, 2); err != nil {
		t.Fatalf("no answer after the restart: %v", err)
	}
	stop()
	if want := `] reacted "❤" to your message "echo: hi"`; !strings.Contains(lastRunSystem(h.ai), want) {
		t.Errorf("the first run after the restart does not read the reaction %q:\n%s", want, lastRunSystem(h.ai))
	}
}
