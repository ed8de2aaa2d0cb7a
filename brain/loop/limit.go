package loop

import "time"

// rateLimit allows each user at most n model runs in any window of per (n ≤ 0: no
// limit). It is not safe for concurrent use: the core loop owns it.
type rateLimit struct {
	n    int
	per  time.Duration
	runs map[int64][]time.Time // per user, the starts of the runs in the window, oldest first
}

func newRateLimit(n int, per time.Duration) *rateLimit {
	return &rateLimit{n: n, per: per, runs: map[int64][]time.Time{}}
}

// allow reports whether user may start a run at now, and if not, when it may; a run it
// allows is counted.
func (r *rateLimit) allow(user int64, now time.Time) (bool, time.Time) {
	if r.n <= 0 || user == 0 {
		return true, time.Time{}
	}
	starts := r.runs[user]
	i := 0
	for i < len(starts) && !starts[i].After(now.Add(-r.per)) {
		i++
	}
	starts = starts[i:]
	if len(starts) >= r.n {
		r.runs[user] = starts
		return false, starts[0].Add(r.per)
	}
	r.runs[user] = append(starts, now)
	return true, time.Time{}
}

// prune drops users without a run in the window, so the map stays as small as the set of
// recently active users.
func (r *rateLimit) prune(now time.Time) {
	for u, starts := range r.runs {
		if len(starts) == 0 || !starts[len(starts)-1].After(now.Add(-r.per)) {
			delete(r.runs, u)
		}
	}
}
