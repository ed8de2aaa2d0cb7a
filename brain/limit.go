package brain

import (
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
	LimitUserSpeech       = "user_speech"       // a user's daily speech made
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
		Help: "Things a limit refused or throttled, by limit (pending_reminders, reminders_per_run, user_runs, user_tokens, user_audio, user_speech)."},
		[]string{"limit"})}
	for _, l := range []string{LimitPendingReminders, LimitRemindersPerRun, LimitUserRuns, LimitUserTokens, LimitUserAudio, LimitUserSpeech} {
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
