package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

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
	user1, sys1, mem, err := phaseEnd(p.pid())
	if err != nil {
		return err
	}

	mu.Lock()
	defer mu.Unlock()
	if err := lt.reportOverhead(f, users, ids, pushed, modelAt, wall); err != nil {
		return err
	}
	lt.reportProcess(len(users), user1-user0, sys1-sys0, mem)
	if err := lt.image(p); err != nil {
		return err
	}
	return nil
}

// reportOverhead prints and judges the sequential messages' overhead, from the update
// handed out to its reply, with its breakdown by the model's request (modelAt, by message
// number; the caller holds its lock).
func (lt *loadtest) reportOverhead(f *fakes, users, ids []int64, pushed []time.Time, modelAt map[int]time.Time, wall time.Duration) error {
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
	return nil
}

// reportProcess prints and judges the anima process's CPU (user and system ticks) for n
// messages and its memory after them.
func (lt *loadtest) reportProcess(n int, userTicks, sysTicks int64, mem memory) {
	lt.printf("\n3. CPU and memory of the anima process\n")
	ticks := userTicks + sysTicks
	cpu := float64(ticks) / float64(lt.tck)
	per200 := cpu * 200 / float64(n)
	lt.printf("   CPU (utime+stime) for %d messages: %.2f s (%d ticks at %d Hz; resolution %.2f s), %.2f ms per message\n",
		n, cpu, ticks, lt.tck, 1/float64(lt.tck), cpu*1000/float64(n))
	lt.printf("   of which user %.2f s, system %.2f s\n",
		float64(userTicks)/float64(lt.tck), float64(sysTicks)/float64(lt.tck))
	lt.printf("   VmRSS %s (anonymous %s, file-backed %s), VmHWM (peak) %s after the sequential messages\n",
		mb(mem.RSS), mb(mem.Anon), mb(mem.FileMap), mb(mem.HWM))
	lt.judge("CPU per 200 messages", fmt.Sprintf("%.2f s", per200), fmt.Sprintf("≤ %.2f s", targetCPUPer200), per200 <= targetCPUPer200)
	lt.judge("VmRSS", mb(mem.RSS), "≤ "+mib(targetRSS), mem.RSS <= targetRSS)
	lt.judge("VmHWM (peak RSS)", mb(mem.HWM), "≤ "+mib(targetRSS), mem.HWM <= targetRSS)
}
