package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// Targets.
const (
	targetStart     = 50 * time.Millisecond
	targetMedian    = 3 * time.Millisecond
	targetP99       = 15 * time.Millisecond
	targetCPUPer200 = 0.45     // seconds (issue 9; 0.5 before)
	targetRSS       = 16 << 20 // bytes: 16 MiB (issue 9; 20 MB before)
	globalRate      = 30       // Telegram's overall limit, messages per second
)

// Time limits.
const (
	firstPollWait = 10 * time.Second   // start → first getUpdates, before it is an error
	answerWait    = 10 * time.Second   // one sequential message's answer
	burstCap      = 2 * time.Minute    // the whole burst
	settleQuiet   = 2 * time.Second    // no sends for this long: the burst is over
	settleMax     = 30 * time.Second   // bound on waiting for trailing replies
	firstUser     = int64(700_000_000) // user ids (private chat id = user id) start here
)

// seqText finds a sequential message's number in the model's echo.
var seqText = regexp.MustCompile(`message (\d+): how is your day going\?`)

// fakes are one pair of fake servers.
type fakes struct {
	tg *telegramtest.Server
	ai *openaitest.Server
}

func newFakes() (*fakes, error) {
	tg, err := telegramtest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("fake telegram: %w", err)
	}
	ai, err := openaitest.NewServer()
	if err != nil {
		tg.Close()
		return nil, fmt.Errorf("fake openai: %w", err)
	}
	return &fakes{tg: tg, ai: ai}, nil
}

func (f *fakes) close() {
	f.tg.Close()
	f.ai.Close()
}

// launch starts anima with a fresh store in dir/name, talking to f, and waits for its
// first getUpdates.
func (lt *loadtest) launch(ctx context.Context, f *fakes, name string, users []int64, extra ...string) (*proc, error) {
	dir := filepath.Join(lt.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("mkdir: %w", err)
	}
	cfg, err := writeConfig(dir, f.tg.URL, f.ai.URL(), lt.metricsListen(), users, lt.o.mcp)
	if err != nil {
		return nil, err
	}
	p, err := startAnima(lt.o.binary, dir, cfg, extra...)
	if err != nil {
		return nil, err
	}
	wctx, cancel := p.watch(ctx)
	defer cancel()
	wctx, cancelT := context.WithTimeout(wctx, firstPollWait)
	defer cancelT()
	if err := f.tg.WaitFor(wctx, func() bool { return len(f.tg.Polls()) > 0 }); err != nil {
		p.kill()
		return nil, lt.procErr(p, wctx, fmt.Errorf("no getUpdates within %v: %w", firstPollWait, err))
	}
	return p, nil
}

// procErr adds the reason the wait ended and the tail of anima's log to err.
func (lt *loadtest) procErr(p *proc, ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (%v)", err, cause)
	}
	if tail := p.logTail(20); tail != "" {
		err = fmt.Errorf("%w\nanima log (%s):\n%s", err, p.log, tail)
	}
	return err
}

// startup measures exec → first getUpdates over lt.o.starts starts, each with fresh fakes
// and a fresh store.
func (lt *loadtest) startup(ctx context.Context) error {
	lt.printf("1. start → first getUpdates (%d starts, fresh store each; exec to the fake receiving getUpdates)\n", lt.o.starts)
	var ds []time.Duration
	for i := range lt.o.starts {
		d, detail, err := lt.startOnce(ctx, i)
		if err != nil {
			return err
		}
		ds = append(ds, d)
		lt.printf("   start %d  %-9s (%s)\n", i+1, ms(d), detail)
	}
	med := median(ds)
	lt.judge("start → getUpdates median", ms(med), "≤ "+ms(targetStart), med <= targetStart)
	return nil
}

func (lt *loadtest) startOnce(ctx context.Context, i int) (time.Duration, string, error) {
	f, err := newFakes()
	if err != nil {
		return 0, "", err
	}
	defer f.close()
	p, err := lt.launch(ctx, f, fmt.Sprintf("start-%d", i+1), []int64{firstUser})
	if err != nil {
		return 0, "", err
	}
	d := f.tg.Polls()[0].At.Sub(p.started)
	var steps []string
	seen := map[string]bool{}
	for _, c := range f.tg.Calls() {
		if !seen[c.Method] && c.Method != "getUpdates" {
			seen[c.Method] = true
			steps = append(steps, fmt.Sprintf("%s at %s", c.Method, ms(c.At.Sub(p.started))))
		}
	}
	took, err := p.stop()
	if err != nil {
		return 0, "", lt.procErr(p, ctx, err)
	}
	steps = append(steps, "SIGTERM → exit 0 in "+ms(took))
	return d, strings.Join(steps, ", "), nil
}

// traffic runs one anima for the sequential messages and then the burst.
func (lt *loadtest) traffic(ctx context.Context) error {
	f, err := newFakes()
	if err != nil {
		return err
	}
	defer f.close()

	// Users: one for warming up, one per sequential message, then the burst's.
	n := 1 + lt.o.messages + lt.o.users
	users := make([]int64, n)
	for i := range users {
		users[i] = firstUser + int64(i)
	}
	warm, seq, burst := users[0], users[1:1+lt.o.messages], users[1+lt.o.messages:]

	var extra []string
	if lt.o.profile != "" {
		extra = []string{"--cpuprofile", filepath.Join(lt.o.profile, "cpu.pprof"),
			"--memprofile", filepath.Join(lt.o.profile, "heap.pprof")}
	}
	p, err := lt.launch(ctx, f, "run", users, extra...)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer p.kill()
	wctx, cancel := p.watch(ctx)
	defer cancel()

	// One exchange first, so connections and lazily built state are in place.
	f.tg.PushText(warm, warm, "hello, just warming up")
	if err := lt.awaitReply(wctx, f.tg, warm); err != nil {
		return lt.procErr(p, wctx, fmt.Errorf("warm-up: %w", err))
	}

	if err := lt.sequential(wctx, f, p, seq); err != nil {
		return lt.procErr(p, wctx, err)
	}
	if err := lt.burst(wctx, f, p, burst); err != nil {
		return lt.procErr(p, wctx, err)
	}

	lt.printf("\n5. shutdown\n")
	calls := f.tg.Calls()
	failed := 0
	for _, c := range calls {
		if c.Status != 200 {
			failed++
		}
	}
	lt.printf("   Bot API calls: %d, of which not 200: %d\n", len(calls), failed)
	if v := f.ai.Violations(); len(v) > 0 {
		lt.printf("   WARNING: %d invalid model requests, first: %s\n", len(v), v[0])
	}
	took, err := p.stop()
	if err != nil {
		return lt.procErr(p, ctx, fmt.Errorf("stop: %w", err))
	}
	lt.printf("   SIGTERM → exit 0 in %s\n", ms(took))
	return nil
}

// awaitReply waits until chat has received a message.
func (lt *loadtest) awaitReply(ctx context.Context, tg *telegramtest.Server, chat int64) error {
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	if err := tg.WaitFor(ctx, func() bool { return len(tg.SentTo(chat)) > 0 }); err != nil {
		return fmt.Errorf("no answer to chat %d within %v: %w", chat, answerWait, err)
	}
	return nil
}

// sequential sends one message per user, each after the previous was answered, and
// reports the overhead, CPU and memory.
func (lt *loadtest) sequential(ctx context.Context, f *fakes, p *proc, users []int64) error {
	lt.printf("\n2. per-message overhead (%d sequential messages, one user each, next sent %v after the previous reply;\n"+
		"   update handed out by getUpdates → its sendMessage received)\n", len(users), lt.o.gap)
	user0, sys0, err := cpuSplit(p.pid())
	if err != nil {
		return err
	}
	// The model's arrival time per message splits the overhead in two.
	var (
		mu      sync.Mutex
		modelAt = map[int]time.Time{}
	)
	f.ai.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		now := time.Now()
		r := openaitest.Echo(req)
		if m := seqText.FindStringSubmatch(r.Content); m != nil {
			n, _ := strconv.Atoi(m[1])
			mu.Lock()
			if _, ok := modelAt[n]; !ok {
				modelAt[n] = now
			}
			mu.Unlock()
		}
		return r
	})
	defer f.ai.SetDefault(nil)

	ids := make([]int64, len(users))
	pushed := make([]time.Time, len(users))
	start := time.Now()
	var prev time.Time // the previous reply's arrival (the warm-up's at first)
	if sent := f.tg.Sent(); len(sent) > 0 {
		prev = sent[len(sent)-1].At
	}
	for i, u := range users {
		if d := time.Until(prev.Add(lt.o.gap)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return fmt.Errorf("message %d: %w", i+1, context.Cause(ctx))
			}
		}
		pushed[i] = time.Now()
		ids[i] = f.tg.PushText(u, u, fmt.Sprintf("message %d: how is your day going?", i+1))
		if err := lt.awaitReply(ctx, f.tg, u); err != nil {
			return fmt.Errorf("message %d: %w", i+1, err)
		}
		prev = f.tg.SentTo(u)[0].At
	}
	wall := time.Since(start)
	user1, sys1, err := cpuSplit(p.pid())
	if err != nil {
		return err
	}
	mem, err := readMemory(p.pid())
	if err != nil {
		return err
	}

	handed := handedOut(f.tg.Polls())
	first := map[int64]telegramtest.Message{}
	for _, m := range f.tg.Sent() {
		if _, ok := first[m.ChatID]; !ok {
			first[m.ChatID] = m
		}
	}
	typing := map[int64]time.Time{}
	for _, a := range f.tg.Actions() {
		if _, ok := typing[a.ChatID]; !ok {
			typing[a.ChatID] = a.At
		}
	}
	var lat, e2e, toModel, fromModel, toTyping []time.Duration
	notEcho := 0
	mu.Lock()
	defer mu.Unlock()
	for i, u := range users {
		reply := first[u]
		at, ok := handed[ids[i]]
		if !ok {
			return fmt.Errorf("message %d (update %d) answered but never handed out by getUpdates", i+1, ids[i])
		}
		lat = append(lat, reply.At.Sub(at))
		e2e = append(e2e, reply.At.Sub(pushed[i]))
		if m, ok := modelAt[i+1]; ok {
			toModel = append(toModel, m.Sub(at))
			fromModel = append(fromModel, reply.At.Sub(m))
		}
		if t, ok := typing[u]; ok {
			toTyping = append(toTyping, t.Sub(at))
		}
		if !strings.HasPrefix(reply.Visible, "echo: ") {
			notEcho++
		}
	}
	slices.Sort(lat)
	slices.Sort(e2e)
	lt.printf("   median %s  p90 %s  p99 %s  max %s  (min %s)\n",
		ms(median(lat)), ms(percentile(lat, 90)), ms(percentile(lat, 99)), ms(lat[len(lat)-1]), ms(lat[0]))
	lt.printf("   push → sendMessage, for comparison: median %s  p99 %s; %d messages in %s (%.0f msg/s)\n",
		ms(median(e2e)), ms(percentile(e2e, 99)), len(users), wall.Round(time.Millisecond),
		float64(len(users))/wall.Seconds())
	lt.printf("   breakdown (medians): handed out → model request %s, model request → sendMessage %s",
		ms(median(toModel)), ms(median(fromModel)))
	if len(toTyping) > 0 {
		lt.printf("; handed out → sendChatAction %s (%d of %d)", ms(median(toTyping)), len(toTyping), len(users))
	}
	lt.printf("\n")
	if notEcho > 0 {
		lt.printf("   WARNING: %d replies are not the model's echo (apology or other text)\n", notEcho)
	}
	lt.judge("overhead median", ms(median(lat)), "≤ "+ms(targetMedian), median(lat) <= targetMedian)
	lt.judge("overhead p99", ms(percentile(lat, 99)), "≤ "+ms(targetP99), percentile(lat, 99) <= targetP99)

	lt.printf("\n3. CPU and memory of the anima process\n")
	ticks0, ticks1 := user0+sys0, user1+sys1
	cpu := float64(ticks1-ticks0) / float64(lt.tck)
	per200 := cpu * 200 / float64(len(users))
	lt.printf("   CPU (utime+stime) for %d messages: %.2f s (%d ticks at %d Hz; resolution %.2f s), %.2f ms per message\n",
		len(users), cpu, ticks1-ticks0, lt.tck, 1/float64(lt.tck), cpu*1000/float64(len(users)))
	lt.printf("   of which user %.2f s, system %.2f s\n",
		float64(user1-user0)/float64(lt.tck), float64(sys1-sys0)/float64(lt.tck))
	lt.printf("   VmRSS %s (anonymous %s, file-backed %s), VmHWM (peak) %s after the sequential messages\n",
		mb(mem.RSS), mb(mem.Anon), mb(mem.FileMap), mb(mem.HWM))
	lt.judge("CPU per 200 messages", fmt.Sprintf("%.2f s", per200), fmt.Sprintf("≤ %.2f s", targetCPUPer200), per200 <= targetCPUPer200)
	lt.judge("VmRSS", mb(mem.RSS), "≤ "+mib(targetRSS), mem.RSS <= targetRSS)
	lt.judge("VmHWM (peak RSS)", mb(mem.HWM), "≤ "+mib(targetRSS), mem.HWM <= targetRSS)
	return nil
}

// burst pushes perUser messages for each user at once and waits until every user got a
// reply sent after their last message was handed out.
func (lt *loadtest) burst(ctx context.Context, f *fakes, p *proc, users []int64) error {
	lt.printf("\n4. burst (%d users × %d messages = %d updates pushed at once)\n",
		len(users), lt.o.perUser, len(users)*lt.o.perUser)
	last := map[int64]int64{} // user → update id of their last message
	inBurst := map[int64]bool{}
	for _, u := range users {
		inBurst[u] = true
	}
	start := time.Now()
	for k := range lt.o.perUser {
		for _, u := range users {
			last[u] = f.tg.PushText(u, u, fmt.Sprintf("burst message %d of %d", k+1, lt.o.perUser))
		}
	}

	// answered reports when each user got a reply after their last message was handed
	// out (zero time if not yet).
	answered := func() map[int64]time.Time {
		handed := handedOut(f.tg.Polls())
		out := map[int64]time.Time{}
		for _, m := range f.tg.Sent() {
			if !inBurst[m.ChatID] {
				continue
			}
			h, ok := handed[last[m.ChatID]]
			if ok && m.At.After(h) {
				if at, seen := out[m.ChatID]; !seen || m.At.Before(at) {
					out[m.ChatID] = m.At
				}
			}
		}
		return out
	}
	cctx, cancel := context.WithTimeout(ctx, burstCap)
	defer cancel()
	var done map[int64]time.Time
	waitErr := f.tg.WaitFor(cctx, func() bool {
		done = answered()
		return len(done) == len(users)
	})
	if waitErr != nil {
		if err := p.alive(); err != nil {
			return fmt.Errorf("burst: %w", err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("burst: %w", ctx.Err())
		}
	}
	var all time.Time
	for _, at := range done {
		if at.After(all) {
			all = at
		}
	}

	// Trailing replies (a user's later messages answered separately) still come: wait
	// until the sends stop, then count.
	settleEnd := time.Now().Add(settleMax)
	for time.Now().Before(settleEnd) {
		sent := f.tg.Sent()
		if len(sent) == 0 || time.Since(sent[len(sent)-1].At) >= settleQuiet {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("burst: %w", ctx.Err())
		}
	}

	var times []time.Time // every send during the burst (pacing is global)
	perChat := map[int64][]time.Time{}
	replies := 0
	for _, m := range f.tg.Sent() {
		if m.At.Before(start) {
			continue
		}
		times = append(times, m.At)
		if inBurst[m.ChatID] {
			replies++
			perChat[m.ChatID] = append(perChat[m.ChatID], m.At)
		}
	}
	minReplies, maxReplies, silent := -1, 0, 0
	peakChat := 0
	var gapChat time.Duration = -1
	for _, u := range users {
		ts := perChat[u]
		if len(ts) == 0 {
			silent++
		}
		if minReplies < 0 || len(ts) < minReplies {
			minReplies = len(ts)
		}
		maxReplies = max(maxReplies, len(ts))
		peakChat = max(peakChat, peakWindow(ts, time.Second))
		if g, ok := minGap(ts); ok && (gapChat < 0 || g < gapChat) {
			gapChat = g
		}
	}
	peak := peakWindow(times, time.Second)
	mem, err := readMemory(p.pid())
	if err != nil {
		return err
	}

	if len(done) == len(users) {
		lt.printf("   every user answered %s after the push\n", ms(all.Sub(start)))
	} else {
		lt.printf("   NOT ANSWERED within %v: %d of %d users lack a reply after their last message\n",
			burstCap, len(users)-len(done), len(users))
	}
	// Pacing floor: each user's first qualifying reply needs a global slot.
	floor := time.Duration(len(users)-1) * time.Second / globalRate
	lt.printf("   (pacing floor for one reply per user at %d/s: %s)\n", globalRate, ms(floor))
	lt.printf("   replies: %d in total for %d messages (per user min %d, max %d)\n",
		replies, len(users)*lt.o.perUser, minReplies, maxReplies)
	if len(times) > 1 {
		span := times[len(times)-1].Sub(times[0])
		lt.printf("   sends from first to last: %s (%.1f msg/s on average); longest pause between two sends: %s\n",
			ms(span), float64(len(times)-1)/span.Seconds(), ms(maxGap(times)))
	}
	lt.printf("   peak overall: %d sendMessage in a 1 s sliding window", peak)
	if s, ok := minSpan(times, globalRate); ok {
		lt.printf(" (shortest span of %d consecutive sends: %s)", globalRate+1, ms(s))
	}
	lt.printf("\n   peak per chat: %d in a 1 s sliding window", peakChat)
	if gapChat >= 0 {
		lt.printf(" (shortest gap between two sends to one chat: %s)", ms(gapChat))
	}
	lt.printf("\n   VmRSS %s, VmHWM %s after the burst\n", mb(mem.RSS), mb(mem.HWM))

	if silent > 0 {
		return fmt.Errorf("burst: %d of %d users got no reply at all within %v", silent, len(users), burstCap)
	}
	answeredAll := len(done) == len(users)
	value := "not all"
	if answeredAll {
		value = ms(all.Sub(start))
	}
	lt.judge("burst answered", value, fmt.Sprintf("all %d users within %v", len(users), burstCap), answeredAll)
	lt.judge("burst peak per chat", fmt.Sprintf("%d/s", peakChat), "≤ 1/s (Telegram: 1 msg/s per chat)", peakChat <= 1)
	lt.judge("burst peak overall", fmt.Sprintf("%d/s", peak), fmt.Sprintf("≤ %d/s (Telegram's global limit)", globalRate), peak <= globalRate)
	return nil
}
