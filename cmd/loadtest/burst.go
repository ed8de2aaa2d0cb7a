package main

import (
	"context"
	"fmt"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

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

	done, all, err := awaitBurst(ctx, f, p, users, last, inBurst)
	if err != nil {
		return err
	}
	st := burstStatsOf(f.tg.Sent(), start, users, inBurst)
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
		st.replies, len(users)*lt.o.perUser, st.minReplies, st.maxReplies)
	if len(st.times) > 1 {
		span := st.times[len(st.times)-1].Sub(st.times[0])
		lt.printf("   sends from first to last: %s (%.1f msg/s on average); longest pause between two sends: %s\n",
			ms(span), float64(len(st.times)-1)/span.Seconds(), ms(maxGap(st.times)))
	}
	lt.printf("   peak overall: %d sendMessage in a 1 s sliding window", st.peak)
	if s, ok := minSpan(st.times, globalRate); ok {
		lt.printf(" (shortest span of %d consecutive sends: %s)", globalRate+1, ms(s))
	}
	lt.printf("\n   peak per chat: %d in a 1 s sliding window", st.peakChat)
	if st.gapChat >= 0 {
		lt.printf(" (shortest gap between two sends to one chat: %s)", ms(st.gapChat))
	}
	lt.printf("\n   VmRSS %s, VmHWM %s after the burst\n", mb(mem.RSS), mb(mem.HWM))

	if st.silent > 0 {
		return fmt.Errorf("burst: %d of %d users got no reply at all within %v", st.silent, len(users), burstCap)
	}
	answeredAll := len(done) == len(users)
	value := "not all"
	if answeredAll {
		value = ms(all.Sub(start))
	}
	lt.judge("burst answered", value, fmt.Sprintf("all %d users within %v", len(users), burstCap), answeredAll)
	lt.judge("burst peak per chat", fmt.Sprintf("%d/s", st.peakChat), "≤ 1/s (Telegram: 1 msg/s per chat)", st.peakChat <= 1)
	lt.judge("burst peak overall", fmt.Sprintf("%d/s", st.peak), fmt.Sprintf("≤ %d/s (Telegram's global limit)", globalRate), st.peak <= globalRate)
	return nil
}

// awaitBurst waits until every user in the burst got a reply sent after their last
// message (last: user → its update id) was handed out, or burstCap passes, then until the
// trailing sends stop. It returns when each user was answered and when the last of them.
func awaitBurst(ctx context.Context, f *fakes, p *proc, users []int64, last map[int64]int64, inBurst map[int64]bool) (map[int64]time.Time, time.Time, error) {
	var done map[int64]time.Time
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
	waitErr := f.tg.WaitFor(cctx, func() bool {
		done = answered()
		return len(done) == len(users)
	})
	if waitErr != nil {
		if err := p.alive(); err != nil {
			return nil, time.Time{}, fmt.Errorf("burst: %w", err)
		}
		if ctx.Err() != nil {
			return nil, time.Time{}, fmt.Errorf("burst: %w", ctx.Err())
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
			return nil, time.Time{}, fmt.Errorf("burst: %w", ctx.Err())
		}
	}

	return done, all, nil
}

// burstStats are the sends of a burst: every send after it started (pacing is global),
// the replies to its users and their spread.
type burstStats struct {
	times                                   []time.Time
	replies, minReplies, maxReplies, silent int
	peak, peakChat                          int           // sendMessage in a 1 s sliding window, overall and per chat
	gapChat                                 time.Duration // shortest gap between two sends to one chat (-1: none)
}

// burstStatsOf counts the sends after start.
func burstStatsOf(sent []telegramtest.Message, start time.Time, users []int64, inBurst map[int64]bool) burstStats {
	var st burstStats
	perChat := map[int64][]time.Time{}
	for _, m := range sent {
		if m.At.Before(start) {
			continue
		}
		st.times = append(st.times, m.At)
		if inBurst[m.ChatID] {
			st.replies++
			perChat[m.ChatID] = append(perChat[m.ChatID], m.At)
		}
	}
	st.minReplies, st.gapChat = -1, -1
	for _, u := range users {
		ts := perChat[u]
		if len(ts) == 0 {
			st.silent++
		}
		if st.minReplies < 0 || len(ts) < st.minReplies {
			st.minReplies = len(ts)
		}
		st.maxReplies = max(st.maxReplies, len(ts))
		st.peakChat = max(st.peakChat, peakWindow(ts, time.Second))
		if g, ok := minGap(ts); ok && (st.gapChat < 0 || g < st.gapChat) {
			st.gapChat = g
		}
	}
	st.peak = peakWindow(st.times, time.Second)
	return st
}
