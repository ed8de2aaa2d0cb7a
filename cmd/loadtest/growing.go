package main

import (
	"context"
	"fmt"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// growingSpacing is the least time between two messages of one user in the growing run:
// 18 a minute, under config.yaml's limits.user_runs_per_minute (20), so no run waits on it.
const growingSpacing = time.Minute / 18

// growing sends lt.o.growing messages from the users in turn, each after the previous one
// was answered and at most 18 a minute from one user, so every chat's history (and the
// store) grows as the run goes on, and reports the CPU they took: what a steady
// conversation costs rather than a first word.
func (lt *loadtest) growing(ctx context.Context, f *fakes, p *proc, users []int64) error {
	lt.printf("\n6. growing store (%d messages from %d users in turn, each after the previous reply, ≤ 18 a minute each)\n",
		lt.o.growing, len(users))
	user0, sys0, err := cpuSplit(p.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	last := map[int64]time.Time{}
	for i := range lt.o.growing {
		u := users[i%len(users)]
		if d := time.Until(last[u].Add(growingSpacing)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		last[u] = time.Now()
		had := len(f.tg.SentTo(u))
		f.tg.PushText(u, u, fmt.Sprintf("growing %d: and then what happened?", i+1))
		if err := lt.awaitNth(ctx, f.tg, u, had+1); err != nil {
			return fmt.Errorf("growing message %d: %w", i+1, err)
		}
	}
	wall := time.Since(start)
	user1, sys1, mem, err := phaseEnd(p.pid())
	if err != nil {
		return err
	}
	cpu := float64(user1-user0+sys1-sys0) / float64(lt.tck)
	lt.printf("   CPU (utime+stime): %.2f s for %d messages (%.2f s per 1,000) in %s; VmRSS %s after\n",
		cpu, lt.o.growing, cpu*1000/float64(lt.o.growing), wall.Round(time.Millisecond), mb(mem.RSS))
	return nil
}

// awaitNth waits until chat has received n messages.
func (lt *loadtest) awaitNth(ctx context.Context, tg *telegramtest.Server, chat int64, n int) error {
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	if err := tg.WaitFor(ctx, func() bool { return len(tg.SentTo(chat)) >= n }); err != nil {
		return fmt.Errorf("no answer %d to chat %d within %v: %w", n, chat, answerWait, err)
	}
	return nil
}
