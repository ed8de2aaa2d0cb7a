package brain

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Limit names, the limit label of anima_limits_refused_total.
const (
	LimitPendingReminders = "pending_reminders" // a chat's pending reminders
	LimitRemindersPerRun  = "reminders_per_run" // new reminders of one cognition run
	LimitUserRuns         = "user_runs"         // model runs per user and minute
	LimitUserTokens       = "user_tokens"       // a user's daily share of the token budget
	LimitUserAudio        = "user_audio"        // a user's daily audio transcribed
)

// Refusals counts what the limits refused, in anima_limits_refused_total{limit}. One is
// built per registry and shared by the packages that enforce limits; a nil *Refusals
// counts nothing.
type Refusals struct {
	vec *prometheus.CounterVec
}

// NewRefusals builds the counter on reg (nil: unregistered), every known limit at zero.
func NewRefusals(reg prometheus.Registerer) *Refusals {
	r := &Refusals{vec: promauto.With(reg).NewCounterVec(prometheus.CounterOpts{Name: "anima_limits_refused_total",
		Help: "Things a limit refused or throttled, by limit (pending_reminders, reminders_per_run, user_runs, user_tokens, user_audio)."},
		[]string{"limit"})}
	for _, l := range []string{LimitPendingReminders, LimitRemindersPerRun, LimitUserRuns, LimitUserTokens, LimitUserAudio} {
		r.vec.WithLabelValues(l)
	}
	return r
}

// Refused counts one refusal by limit.
func (r *Refusals) Refused(limit string) {
	if r != nil {
		r.vec.WithLabelValues(limit).Inc()
	}
}

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
