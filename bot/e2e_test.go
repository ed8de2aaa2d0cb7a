package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/bot"
	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
	"github.com/anima-bot/anima/storage"
	"github.com/go-telegram/bot/models"
	dto "github.com/prometheus/client_model/go"
	"github.com/sashabaranov/go-openai"
)

const user = 4242

// harness runs bot.Run in-process against the fake Telegram and OpenAI servers.
type harness struct {
	t   *testing.T
	tg  *telegramtest.Server
	ai  *openaitest.Server
	cfg config.Config
	// opts are the options start passes to bot.Run (tests set opts.Clock, opts.Plugins).
	opts bot.Options
}

// useClock makes anima run on a manual clock standing at now and returns it: the test
// moves time with Advance instead of waiting (the loop still ticks every cfg.Brain.Tick of
// real time and reads the clock then).
func (h *harness) useClock(now time.Time) *braintest.Clock {
	c := braintest.NewClock(now)
	h.opts.Clock = c
	h.tg.SetClock(c.Now)
	return c
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, tg: telegramtest.New(t), ai: openaitest.New(t)}
	cfg := config.Default()
	cfg.Telegram.Token = config.Secret(telegramtest.DefaultToken)
	cfg.Telegram.APIURL = h.tg.URL
	cfg.Telegram.AllowedUsers = []int64{user}
	cfg.LLM.BaseURL = h.ai.URL()
	cfg.LLM.APIKey = "test-key"
	cfg.LLM.RequestTimeout = config.Duration(10 * time.Second)
	cfg.Storage.Path = filepath.Join(t.TempDir(), "anima.db")
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.Proactive.Enabled = false
	cfg.Brain.Tick = config.Duration(50 * time.Millisecond)
	h.cfg = cfg
	// A failing model request is retried after 10 ms and 20 ms of real time instead of 1 s
	// and 2 s: what the tests check of a failure is what anima does once the retries are
	// spent (brain/cognition tests the backoff itself).
	h.opts.RetryBackoff = 10 * time.Millisecond
	t.Cleanup(func() {
		if v := h.ai.Violations(); len(v) > 0 {
			t.Errorf("the fake OpenAI server saw invalid requests: %v", v)
		}
	})
	return h
}

// start runs anima and returns its addresses and a stop function that waits for Run to
// return (and fails the test if it returned an error).
func (h *harness) start() (bot.Addrs, func()) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan bot.Addrs, 1)
	errc := make(chan error, 1)
	go func() {
		opts := h.opts
		opts.Started = func(a bot.Addrs) { started <- a }
		errc <- bot.Run(ctx, h.cfg, opts)
	}()
	var addrs bot.Addrs
	select {
	case addrs = <-started:
	case err := <-errc:
		cancel()
		h.t.Fatalf("Run returned before starting: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		h.t.Fatal("anima did not start within 10s")
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			h.t.Error("Run did not return within 15s of stop")
		}
	}
	h.t.Cleanup(stop)
	return addrs, stop
}

// run starts anima and returns its addresses; anima stops when the test ends (a test
// that stops and restarts it calls start).
func (h *harness) run() bot.Addrs {
	h.t.Helper()
	addrs, _ := h.start()
	return addrs
}

// say pushes text from user in their private chat and waits for anima's first message,
// failing the test if none comes; it returns the messages sent so far. Call it from the
// test that made the harness (it fails h.t).
func (h *harness) say(text string) []telegramtest.Message {
	h.t.Helper()
	return h.sayUntil(text, 1)
}

// sayUntil pushes text from user in their private chat and waits until anima has sent n
// messages in all, failing the test if they do not come; it returns the messages sent so
// far. Call it from the test that made the harness (it fails h.t).
func (h *harness) sayUntil(text string, n int) []telegramtest.Message {
	h.t.Helper()
	h.tg.PushText(user, user, text)
	return h.waitSent(n, "the answer to "+strconv.Quote(text))
}

// waitSent waits until anima has sent n messages in all and returns them; it fails the
// test, naming what it waited for, if they do not come.
func (h *harness) waitSent(n int, what string) []telegramtest.Message {
	h.t.Helper()
	sent, err := h.tg.WaitSent(waitCtx(h.t), n)
	if err != nil {
		h.t.Fatalf("%s: %v", what, err)
	}
	return sent
}

// lastRequest is the newest request the fake model ai has had.
func lastRequest(ai *openaitest.Server) openaitest.Request {
	reqs := ai.Requests()
	return reqs[len(reqs)-1]
}

// settleTicks is how many ticks of the loop settle waits out after the outbox empties.
const settleTicks = 10

// settle waits until anima served by the metrics at addr has nothing left to deliver
// (anima_outbox_pending 0) and its loop has since ticked settleTicks times (500 ms at the
// harness's 50 ms tick): whatever it was doing (another part of a reply, a duplicate, a
// delivery's outcome) has been sent and taken in by then. Counted in the loop's ticks, the
// wait stretches with a loaded machine, where a fixed sleep could end before the loop moved.
func settle(t *testing.T, addr string) {
	t.Helper()
	ctx := waitCtx(t)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	since := -1.0 // the tick count when the outbox was last seen empty
	for {
		mfs := scrape(t, addr)
		pending, ticks := metricValue(t, mfs, "anima_outbox_pending"), metricValue(t, mfs, "anima_ticks_total")
		switch {
		case pending != 0:
			since = -1
		case since < 0:
			since = ticks
		case ticks-since >= settleTicks:
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("anima did not settle: %v messages pending in the outbox", pending)
		}
	}
}

// settled waits until anima, its metrics at addr, has settled (settle) and returns all the
// messages it has sent: a duplicate or a further part would be among them by then.
func (h *harness) settled(addr string) []telegramtest.Message {
	h.t.Helper()
	settle(h.t, addr)
	return h.tg.Sent()
}

// metricValue is the value of the unlabelled gauge or counter name in mfs.
func metricValue(t *testing.T, mfs map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil || len(mf.GetMetric()) != 1 {
		t.Fatalf("/metrics lacks %s", name)
	}
	m := mf.GetMetric()[0]
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetCounter().GetValue()
}

func TestReplyAndRestartKeepsHistory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, stop := h.start()
	// A model that takes a moment: the typing indicator shows meanwhile.
	slow := openaitest.Answer("echo: hello, I'm Ada and I love sailing", "active", 0.9)
	slow.Delay = 700 * time.Millisecond
	h.ai.Enqueue(slow)
	sent := h.say("hello, I'm Ada and I love sailing")
	if want := "echo: hello, I'm Ada and I love sailing"; sent[0].Visible != want {
		t.Fatalf("reply = %q, want %q", sent[0].Visible, want)
	}
	if sent[0].ParseMode != "HTML" {
		t.Errorf("parse mode = %q, want HTML", sent[0].ParseMode)
	}
	if len(h.tg.Actions()) == 0 {
		t.Error("no typing action while the model worked")
	}
	stop()

	// A second run on the same store: the model sees the earlier exchange.
	_, stop = h.start()
	defer stop()
	h.sayUntil("what do I love?", 2)
	last := lastRequest(h.ai).Raw
	if !strings.Contains(string(last), "I love sailing") {
		t.Errorf("the prompt after a restart lacks the earlier turn:\n%s", last)
	}
	if n := len(h.tg.Sent()); n != 2 {
		t.Errorf("%d messages sent, want 2 (nothing repeated across the restart)", n)
	}
}

func TestUnauthorizedUserCostsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.run()
	id := h.tg.PushText(999, 999, "let me in")
	if err := h.tg.WaitPollOffset(waitCtx(t), id+1); err != nil {
		t.Fatal(err)
	}
	h.say("hi")
	if n := len(h.ai.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (only the allowed user's)", n)
	}
	if m := h.tg.SentTo(999); len(m) != 0 {
		t.Errorf("the unauthorized user got %d messages", len(m))
	}
}

func TestRateLimitedSendIsRetriedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addrs := h.run()
	h.tg.FailNext("sendMessage", 1, 429, 1)
	h.say("are you there?")
	if n := len(h.settled(addrs.Metrics)); n != 1 { // a duplicate would arrive right after
		t.Fatalf("%d messages delivered after a 429, want exactly 1", n)
	}
	var rejected, accepted time.Time
	for _, c := range h.tg.CallsTo("sendMessage") {
		if c.Status == http.StatusTooManyRequests {
			rejected = c.At
		} else if c.Status == http.StatusOK {
			accepted = c.At
		}
	}
	if gap := accepted.Sub(rejected); gap < 900*time.Millisecond {
		t.Errorf("resent %v after the 429; retry_after was 1s", gap)
	}
}

func TestLongReplyIsSplitInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addrs := h.run()
	var paras []string
	for i := range 30 {
		paras = append(paras, fmt.Sprintf("Paragraph %02d. %s", i, strings.Repeat("All work and no play makes a dull bot. ", 8)))
	}
	long := strings.Join(paras, "\n\n")
	h.ai.Enqueue(openaitest.Answer(long, "active", 0.95))
	h.sayUntil("tell me a long story", 3)
	sent := h.settled(addrs.Metrics) // more parts would be sent before the reply leaves the outbox
	var got []string
	for _, m := range sent {
		if n := telegramtest.UTF16Len(m.Visible); n > telegramtest.MaxMessageLength {
			t.Errorf("a part has %d UTF-16 units", n)
		}
		got = append(got, m.Visible)
	}
	joined := strings.Join(got, "\n\n")
	if norm(joined) != norm(long) {
		t.Errorf("the parts do not add up to the reply in order")
	}
	for i := 1; i < len(sent); i++ {
		if gap := sent[i].At.Sub(sent[i-1].At); gap < 900*time.Millisecond {
			t.Errorf("parts %d and %d to one chat %v apart; pacing is 1 msg/s per chat", i-1, i, gap)
		}
	}
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestUnparseableHTMLFallsBackToPlainText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.run()
	h.tg.InjectFault("sendMessage", telegramtest.Fault{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag"})
	h.ai.Enqueue(openaitest.Answer("**bold** move", "active", 0.9))
	sent := h.say("format something")
	if sent[0].ParseMode != "" || sent[0].Text != "bold move" {
		t.Errorf("fallback = %+v, want plain text %q", sent[0], "bold move")
	}
}

func TestBadUpdatesDoNotStopAnything(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.run()
	h.tg.PushRaw([]byte(`{"message": {"message_id": "not a number", "chat": 5}}`))
	h.tg.PushRaw([]byte(`{"message":{"message_id":5,"date":1,"chat":{"id":4242,"type":"private"},"from":{"id":4242,"is_bot":false,"first_name":"A"},"sticker":{"file_id":"x","file_unique_id":"y","type":"regular","width":1,"height":1,"is_animated":false,"is_video":false}}}`))
	h.tg.PushRaw([]byte(`{"edited_message":{"message_id":6,"date":1,"chat":{"id":4242,"type":"private"},"from":{"id":4242,"is_bot":false,"first_name":"A"},"text":"edited"}}`))
	photo := h.tg.AddFile("photos", ".jpg", []byte("\xff\xd8boat"))
	h.tg.PushRaw([]byte(`{"message":{"message_id":7,"date":1,"chat":{"id":4242,"type":"private"},"from":{"id":4242,"is_bot":false,"first_name":"A"},"photo":[{"file_id":"` + photo + `","file_unique_id":"q","width":1,"height":1}],"caption":"look at my boat"}}`))
	sent := h.waitSent(1, "anima's messages")
	if sent[0].Visible != "echo: [photo] look at my boat" {
		t.Errorf("reply = %q, want the caption answered", sent[0].Visible)
	}
	h.sayUntil("still alive?", 2)
}

// TestModelFailureGetsOneMessage: a model that refuses the request (400: the endpoint is
// alive) gets the user the apology; an endpoint that is down (500s open the breaker) gets
// them the outage notice, which promises an answer instead of asking them to repeat.
// Either way, exactly one message.
func TestModelFailureGetsOneMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		want   func(h *harness) string
	}{
		{"refused gets the apology", 400, func(h *harness) string { return h.cfg.Persona.Apology }},
		{"outage gets the notice", 500, func(*harness) string {
			return "I can't reach my thoughts right now — I have your message and will answer as soon as I can."
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			addrs := h.run()
			h.ai.SetDefault(func(openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Fail(tc.status) })
			sent := h.say("hello?")
			if want := tc.want(h); sent[0].Visible != want {
				t.Errorf("reply = %q, want %q", sent[0].Visible, want)
			}
			if n := len(h.settled(addrs.Metrics)); n != 1 {
				t.Errorf("%d messages, want one", n)
			}
		})
	}
}

func TestWebhookSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.Telegram.Mode = config.ModeWebhook
	h.cfg.Telegram.Webhook.Listen = "127.0.0.1:0"
	h.cfg.Telegram.Webhook.Path = "/telegram"
	h.cfg.Telegram.Webhook.PublicURL = "https://bot.example.com"
	h.cfg.Telegram.Webhook.SecretToken = "s3cret_token"
	addrs := h.run()
	if _, err := h.tg.WaitCalls(waitCtx(t), "setWebhook", 1); err != nil {
		t.Fatal(err)
	}
	if wh := h.tg.Webhooks(); len(wh) != 1 || wh[0].SecretToken != "s3cret_token" || wh[0].URL != "https://bot.example.com/telegram" {
		t.Fatalf("setWebhook calls = %+v", wh)
	}
	url := "http://" + addrs.Webhook + "/telegram"
	msg := telegramtest.TextMessage(user, user, models.ChatTypePrivate, "via webhook")
	update := models.Update{ID: 77, Message: &msg}
	for _, secret := range []string{"", "wrong"} {
		code, err := telegramtest.PostWebhook(waitCtx(t), url, secret, update)
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusUnauthorized {
			t.Errorf("secret %q: status %d, want 401", secret, code)
		}
	}
	code, err := telegramtest.PostWebhook(waitCtx(t), url, "s3cret_token", update)
	if err != nil || code != http.StatusOK {
		t.Fatalf("right secret: status %d, %v", code, err)
	}
	// Telegram retrying the same update must not produce a second answer.
	if code, _ := telegramtest.PostWebhook(waitCtx(t), url, "s3cret_token", update); code != http.StatusOK {
		t.Errorf("duplicate delivery: status %d, want 200", code)
	}
	sent := h.waitSent(1, "anima's messages")
	if sent[0].Visible != "echo: via webhook" {
		t.Errorf("reply = %q", sent[0].Visible)
	}
	if n := len(h.settled(addrs.Metrics)); n != 1 {
		t.Errorf("%d replies, want 1", n)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addrs := h.run()
	h.say("count me")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addrs.Metrics + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, body := get("/readyz"); code != 200 {
		t.Errorf("/readyz = %d %s", code, body)
	}
	settle(t, addrs.Metrics) // the reply's counters are updated once the loop takes its delivery in
	_, body := get("/metrics")
	for _, want := range []string{
		"anima_ticks_total", `anima_signals_total{type="user_message"} 1`, `anima_cognition_wakes_total{reason="user_message"} 1`,
		`anima_llm_requests_total{model="gpt-4o-mini",outcome="ok"} 1`, `anima_llm_tokens_total{kind="prompt",model="gpt-4o-mini"}`,
		"anima_llm_request_duration_seconds_bucket", `anima_telegram_requests_total{method="sendMessage",outcome="ok"} 1`,
		`anima_messages_sent_total{kind="reply"} 1`, "anima_outbox_pending 0", "go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The id in a name, a label or a help text; a sample's value may hold its digits by
	// chance (a byte count such as 54242816).
	for _, line := range strings.Split(body, "\n") {
		if i := strings.LastIndexByte(line, ' '); i >= 0 && !strings.HasPrefix(line, "#") {
			line = line[:i] // the sample's value
		}
		if strings.Contains(line, fmt.Sprint(user)) {
			t.Errorf("/metrics mentions the chat id: %s", line)
		}
	}
}

func TestForgetDeletesEverything(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, stop := h.start()
	h.say("my secret is blue")
	sent := h.sayUntil("/forget", 2)
	if !strings.Contains(string(sent[1].ReplyMarkup), "/forget yes") {
		t.Fatalf("/forget did not ask for confirmation: %+v", sent[1])
	}
	h.tg.PushCallback(user, user, "/forget yes")
	h.waitSent(3, "anima's messages")
	st := h.stopped(stop)
	if turns, _ := st.History(user, 0); len(turns) != 0 {
		t.Errorf("history survived /forget: %+v", turns)
	}
	if rels, _ := st.Relationships(); len(rels) != 0 {
		t.Errorf("relationship survived /forget: %+v", rels)
	}
}

// TestForgetLeavesNoTraceOnDisk: a marker word in 30 private messages and in a dead
// letter (an answer Telegram refused); after /forget the raw store file and a fresh hot
// backup hold it 0 times; an offline compaction refuses while the service runs and works
// once it stopped. (Moved from cmd/anima; the CLI words over bot.Dead, bot.Backup and
// bot.Compact are cmd/anima's TestDeadLetterCLI, TestHotBackupCLI and TestCompactCLI.)
func TestForgetLeavesNoTraceOnDisk(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	clock := h.useClock(testNoon())
	h.opts.PerChatInterval = 10 * time.Millisecond // Telegram's 1 s spacing per chat would make 30 replies take 30 s
	var logs braintest.Buffer
	h.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	store := h.cfg.Storage.Path
	const marker = "quetzalmarker"
	_, stop := h.start()
	// Replies to one chat are paced a second apart (real time): 30 of them take 30 s.
	ctx := testCtx(t, 90*time.Second)
	for i := range 30 {
		clock.Advance(4 * time.Second) // 15 runs a minute: under the per-user rate limit
		h.tg.PushText(user, user, fmt.Sprintf("secret %d: my %s is blue", i, marker))
		if _, err := h.tg.WaitSent(ctx, i+1); err != nil {
			t.Fatalf("message %d not answered: %v", i, err)
		}
	}
	// One answer Telegram refuses for good is kept as a dead letter, marker and all.
	h.tg.FailNext("sendMessage", 1, 400, 0)
	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, fmt.Sprintf("refused: my %s is blue", marker))
	waitUntil(t, ctx, "the refused answer kept as a dead letter", func() bool {
		return forgetHasUndeliverable(t, ctx, store)
	})
	before := backupMarkers(t, ctx, store, marker)
	t.Logf("before /forget: a backup holds the marker %d times", before)
	if before == 0 {
		t.Fatal("the marker is not in a backup before /forget: the test proves nothing")
	}

	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, "/forget")
	if _, err := h.tg.WaitSent(ctx, 31); err != nil {
		t.Fatal(err)
	}
	if !forgetHasUndeliverable(t, ctx, store) {
		t.Fatal("the dead letter is gone before /forget yes")
	}
	h.forgetYes(ctx, 32)
	// The compaction follows the confirmation a second later on anima's clock.
	clock.Advance(2 * time.Second)
	waitUntil(t, ctx, "the store file without the marker", func() bool { return markerCount(t, store, marker) == 0 })
	t.Logf("after /forget: the store file holds the marker 0 times")
	if letters, err := bot.Dead(ctx, store, "list"); err != nil || len(letters) != 0 {
		t.Errorf("dead letters after /forget: %+v, %v; want none", letters, err)
	}
	after := backupMarkers(t, ctx, store, marker)
	t.Logf("after /forget: a fresh backup holds the marker %d times", after)
	if after != 0 {
		t.Errorf("a backup taken after /forget holds the marker %d times", after)
	}

	// The service still works on the compacted file.
	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, "hello again")
	if _, err := h.tg.WaitSent(ctx, 33); err != nil {
		t.Fatalf("no answer after the compaction: %v", err)
	}

	// Offline compaction refuses while the service holds the store...
	if _, err := bot.Compact(store); !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("offline compaction while running: err %v, want the store in use", err)
	}
	stop()
	if !strings.Contains(logs.String(), "store compacted") {
		t.Errorf("the service did not log its compaction:\n%s", logs.String())
	}
	// ...and works once it stopped.
	if rep, err := bot.Compact(store); err != nil || rep.After == 0 {
		t.Errorf("offline compaction: %+v, %v", rep, err)
	}
}

// forgetHasUndeliverable reports whether the store at path keeps an undeliverable dead
// letter (what `anima dead list` shows).
func forgetHasUndeliverable(t *testing.T, ctx context.Context, path string) bool {
	t.Helper()
	letters, err := bot.Dead(ctx, path, "list")
	if err != nil {
		t.Fatalf("dead letters: %v", err)
	}
	for _, d := range letters {
		if d.Kind == brain.DeadUndeliverable {
			return true
		}
	}
	return false
}

// TestForgetReachesAWaitingReaction is issue 24's reproduction: the user writes a secret,
// the echo model answers it back, the user reacts ❤ to the answer (a reaction waits in
// the inbox, quoting the answer, for the chat's next run) and confirms /forget; then
// reacts again to the same answer. A hot backup taken before the owed compaction holds
// the secret 0 times; after the compaction the store file holds it 0 times and, anima
// stopped, the inbox holds no reaction. Before: the waiting reaction stayed in the
// inbox for good, the backup held the secret, and the second reaction was taken (the
// answer's id, waiting for a commit, was still "sent"), quoting the secret again.
func TestForgetReachesAWaitingReaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	clock := h.useClock(testNoon())
	var logs braintest.Buffer
	h.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	store := h.cfg.Storage.Path
	const marker = "SILVERKEY4711"
	addrs, stop := h.start()
	ctx := testCtx(t, 60*time.Second)
	h.tg.PushText(user, user, "my bank pin is "+marker)
	sent, err := h.tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent[0].Visible, marker) {
		t.Fatalf("the answer %q does not echo the secret: the test proves nothing", sent[0].Visible)
	}
	answer := sent[0].ID
	modelQuiet(t, ctx, h.ai, addrs.Metrics) // the turn ends: anima has noted the message it sent
	h.tg.PushReaction(user, user, answer, "❤")
	waitMetric(ctx, t, addrs.Metrics, `anima_signals_total{type="reaction"} 1`)

	clock.Advance(4 * time.Second)
	h.tg.PushText(user, user, "/forget")
	if _, err := h.tg.WaitSent(ctx, 2); err != nil {
		t.Fatal(err)
	}
	h.forgetYes(ctx, 3)
	// A reaction to the answer from before the forget.
	late := h.tg.PushReaction(user, user, answer, "👍")
	if err := h.tg.WaitPollOffset(ctx, late+1); err != nil {
		t.Fatal(err)
	}
	if v := metricSample(t, addrs.Metrics, `anima_telegram_updates_total{kind="reaction_other"}`); v != 1 {
		t.Errorf("a reaction to the answer from before /forget: reaction_other = %v, want 1 (not anima's message any more)", v)
	}

	// The compaction is owed and not yet due on anima's clock: a backup now.
	if n := backupMarkers(t, ctx, store, marker); n != 0 {
		t.Errorf("a backup taken while the erasure is owed holds the secret %d times", n)
	}
	clock.Advance(2 * time.Second)
	waitUntil(t, ctx, "the compaction", func() bool { return strings.Contains(logs.String(), "store compacted") })
	if n := markerCount(t, store, marker); n != 0 {
		t.Errorf("the compacted store file holds the secret %d times", n)
	}
	pending, err := h.stopped(stop).Pending()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range pending {
		if sig.Type == brain.SignalReaction {
			t.Errorf("the inbox keeps a reaction after /forget: %+v", sig)
		}
	}
}

// TestHotBackupRestores: a hot backup of the running service holds its history. A store
// path too long for a unix socket address (83 characters or more made `anima run` fail)
// still gets its 0600 control socket beside the store, and a hot backup finds it there.
func TestHotBackupRestores(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, dir string }{
		{"store in a short path", ""},
		{"store in a long path", strings.Repeat("a-long-directory-name-", 6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.dir != "" {
				h.cfg.Storage.Path = filepath.Join(t.TempDir(), tc.dir, "anima.db")
				if n := len(bot.ControlSocket(h.cfg.Storage.Path)); n <= 108 {
					t.Fatalf("the socket path is %d bytes: short enough for a socket address, the test proves nothing", n)
				}
			}
			h.run()
			h.say("remember the lighthouse")
			turns, err := h.hotBackup().History(user, 0)
			if err != nil || len(turns) != 2 || turns[0].Text != "remember the lighthouse" {
				t.Fatalf("restored history = %+v, %v", turns, err)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.opts.PerChatInterval = 10 * time.Millisecond // the answers, not Telegram's pacing, are checked
	h.cfg.Proactive.Enabled = true
	h.run()
	steps := []struct{ send, want string }{
		{"/start", "I'm Anima"},
		{"/help", "/forget"},
		{"/quiet 2", "I won't write first until"},
		{"/status", "You asked me to hold back until"},
		{"/timezone Mars/Olympus", "I don't know the time zone"},
		{"/timezone Europe/Berlin", "your time zone is Europe/Berlin"},
		{"/reminders", "no reminders"},
		{"/cancel abc123", "I have no reminder"},
		{"/frobnicate", "I don't know that command"},
	}
	for i, s := range steps {
		h.tg.PushText(user, user, s.send)
		sent, err := h.tg.WaitSent(waitCtx(t), i+1)
		if err != nil {
			t.Fatalf("%s: %v", s.send, err)
		}
		if got := sent[i].Visible; !strings.Contains(got, s.want) {
			t.Errorf("%s → %q, want it to contain %q", s.send, got, s.want)
		}
	}
	if n := len(h.ai.Requests()); n != 0 {
		t.Errorf("commands cost %d model calls, want 0", n)
	}
	calls, err := h.tg.WaitCalls(waitCtx(t), "setMyCommands", 1)
	if err != nil {
		t.Fatal(err)
	}
	var menu []struct{ Command, Description string }
	if err := json.Unmarshal([]byte(calls[0].Params["commands"]), &menu); err != nil || len(menu) != 10 || menu[len(menu)-1].Command != "forget" || menu[len(menu)-2].Command != "thoughts" {
		t.Errorf("command menu = %+v (%v), want the %d commands /help lists", menu, err, 10)
	}
}

// /timezone, then a message: the answer's prompt is in the new zone, and the store keeps
// it. The message's wake copied the relationship when it arrived, which can be before the
// command's change lands in the loop's state (issue 33, as /voice was): the run read the
// old zone, and a turn that writes the relationship back wrote the old zone over the new.
func TestTimezoneCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply { return openaitest.Echo(req) })
	_, stop := h.start()
	for i, zone := range []string{"Asia/Tokyo", "America/Lima", "Europe/Berlin"} {
		if got := h.sayUntil("/timezone "+zone, 2*i+1)[2*i].Visible; !strings.Contains(got, "your time zone is "+zone) {
			t.Fatalf("/timezone %s → %q", zone, got)
		}
		h.sayUntil("what time is it?", 2*i+2)
		var prompt strings.Builder
		for _, m := range lastRequest(h.ai).Body.Messages {
			prompt.WriteString(m.Content + "\n")
		}
		if !strings.Contains(prompt.String(), " for them (") || !strings.Contains(prompt.String(), ", "+zone+").") {
			t.Fatalf("the run after /timezone %s was not in it:\n%s", zone, prompt.String())
		}
	}
	rels, err := h.stopped(stop).Relationships()
	if err != nil || len(rels) != 1 || rels[0].Timezone != "Europe/Berlin" {
		t.Errorf("stored relationships %+v, %v; want Europe/Berlin", rels, err)
	}
}

func TestRememberedFactSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, stop := h.start()
	h.ai.Enqueue(
		openaitest.Tool("core_remember", `{"attribute":"boat_name","value":"Wind Dancer"}`),
		openaitest.Answer("What a lovely name for a boat!", "active", 0.95),
	)
	h.say("my boat is called Wind Dancer")
	stop()

	_, stop = h.start()
	defer stop()
	h.sayUntil("what was I telling you?", 2)
	last := lastRequest(h.ai)
	found := false
	for _, m := range last.Body.Messages {
		if m.Role == "system" && strings.Contains(m.Content, "boat_name") && strings.Contains(m.Content, "Wind Dancer") {
			found = true
		}
	}
	if !found {
		t.Errorf("the remembered fact is not in the prompt after a restart:\n%s", last.Raw)
	}
}

func TestBlockedUserGoesDormant(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addrs, stop := h.start()
	h.tg.InjectFault("sendMessage", telegramtest.Fault{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	h.tg.PushText(user, user, "bye")
	if _, err := h.tg.WaitCalls(waitCtx(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	settle(t, addrs.Metrics) // let the loop take the result in
	st := h.stopped(stop)
	rels, _ := st.Relationships()
	if len(rels) != 1 || !rels[0].Dormant {
		t.Fatalf("relationship after a 403 = %+v, want dormant", rels)
	}
	if out, _ := st.PendingOutbox(); len(out) != 0 {
		t.Errorf("a message to a user who blocked the bot stays in the outbox: %+v", out)
	}
}

func TestDailyTokenBudgetSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cfg.LLM.DailyTokenBudget = 1 // spent by the first answer
	_, stop := h.start()
	h.say("hello")
	st := h.stopped(stop)
	var u struct {
		Day    string `json:"day"`
		Tokens int    `json:"tokens"`
	}
	ok, err := st.Get(storage.BucketState, []byte("llm_usage"), &u)
	if err != nil || !ok || u.Tokens <= 0 || u.Day != time.Now().UTC().Format(time.DateOnly) {
		t.Fatalf("saved usage = %+v (found %v, %v); want today's tokens", u, ok, err)
	}
}
