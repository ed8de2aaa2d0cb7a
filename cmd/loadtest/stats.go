package main

import (
	"slices"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// percentile returns the p-th percentile (0–100) of sorted by nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1 // ceil(p/100·n) − 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// median of the durations (sorts a copy).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// handedOut maps each update id to when the fake first returned it from getUpdates.
func handedOut(polls []telegramtest.Poll) map[int64]time.Time {
	m := map[int64]time.Time{}
	for _, p := range polls {
		if p.Answered.IsZero() {
			continue
		}
		for _, id := range p.Returned {
			if at, ok := m[id]; !ok || p.Answered.Before(at) {
				m[id] = p.Answered
			}
		}
	}
	return m
}

// peakWindow is the most times falling in any half-open window [t, t+w) — a sliding
// window anchored on each time, which is where a maximum is always reached.
func peakWindow(times []time.Time, w time.Duration) int {
	s := slices.Clone(times)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	best, j := 0, 0
	for i := range s {
		for j < len(s) && s[j].Sub(s[i]) < w {
			j++
		}
		best = max(best, j-i)
	}
	return best
}

// minGap is the shortest interval between consecutive times (0 and false if fewer than 2).
func minGap(times []time.Time) (time.Duration, bool) {
	if len(times) < 2 {
		return 0, false
	}
	s := slices.Clone(times)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	gap := s[1].Sub(s[0])
	for i := 2; i < len(s); i++ {
		gap = min(gap, s[i].Sub(s[i-1]))
	}
	return gap, true
}

// minSpan is the shortest time covering n+1 consecutive times: when it is at least a
// second, no second held more than n sends. false if there are at most n times.
func minSpan(times []time.Time, n int) (time.Duration, bool) {
	if len(times) <= n {
		return 0, false
	}
	s := slices.Clone(times)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	span := s[n].Sub(s[0])
	for i := n + 1; i < len(s); i++ {
		span = min(span, s[i].Sub(s[i-n]))
	}
	return span, true
}

// maxGap is the longest interval between consecutive times (0 if fewer than 2).
func maxGap(times []time.Time) time.Duration {
	s := slices.Clone(times)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	var gap time.Duration
	for i := 1; i < len(s); i++ {
		gap = max(gap, s[i].Sub(s[i-1]))
	}
	return gap
}
