package aggregation

import (
	"time"

	"github.com/anima-bot/anima/brain"
)

// This file holds rule 4, proactive contact: the gates the decision applies (proactive)
// and, from the same gates, the earliest time they will let a chat be woken
// (NextProactive, which /status shows).

// proactive applies rule 4 to rel: every gate must pass. It returns the wake's reason and
// the user's zone.
//
//   - Group and dormant chats and chats without any exchange yet are skipped.
//   - Silence is counted in the user's waking time (brain.Waking) from the last message
//     of either side: hours inside quiet hours, and once the rhythm is Ready inside the
//     inferred sleep, add nothing. By status: awaiting_answer without a follow-up yet →
//     one follow-up once silence ≥ FollowupAfter (reason followup); closed → silence ≥
//     4 × MinSilence × 2^unanswered; otherwise (and awaiting_answer once the follow-up is
//     done) → silence ≥ MinSilence × 2^unanswered and pressure ≥ 0.5 (reason proactive).
//   - The pressure is computed here from the waking silence (Pressure), not read from
//     rel.SocialPressure, so the decision does not depend on whether or when the
//     autonomic layer ran; it equals what the neuron writes.
//   - Cooldown since rel.LastProactive; not inside quiet hours in the user's zone, nor in
//     the hour after them unless the user has been seen then (Rhythm.Seen); fewer
//     than MaxPerDay proactive wakes on the local day (the last one kept from plain
//     pressure, see capped); and no ack holding back ProactiveKey(chat): a handled ack
//     made after the last exchange covers the whole silence, a non-firm deferral yields
//     to a pressure 0.25 above its value.
//   - Late, never early (timing.go, early): once the rhythm is Ready, a plain proactive
//     wake waits until a usual time of the person's has passed without them — today's
//     usual first message (weekdays and weekends apart) by lateMargin or twice its usual
//     spread (at most lateMarginMax) plus the wake's jitter, or yesterday's — and until
//     its wall-clock silence is at least their typical gap between visits.
//   - No follow-up while anima's own first message is the last, unanswered line
//     (rel.UnansweredProactive > 0): such a chat waits for plain pressure, habituated.
//   - Timing (timing.go): the silence needed, the cooldown and the end of quiet hours are
//     jittered per wake; once the user's rhythm is Ready, never inside their inferred
//     sleep, and outside their active hours only when none comes within a day; before
//     it is Ready, outside the hours they have been seen in so far only when none comes
//     within a day; a follow-up never goes out at night (22–7) while the rhythm is not
//     Ready.
func (a *Aggregator) proactive(now time.Time, st *brain.State, rel *brain.Relationship) (brain.Reason, *time.Location, bool) {
	if rel.Group || rel.Dormant {
		return brain.Reason{}, nil, false
	}
	last := rel.LastExchange()
	if last.IsZero() {
		return brain.Reason{}, nil, false
	}
	silence := now.Sub(last)
	need, followup, ok := a.silenceNeeded(rel)
	// The waking silence is never more than the wall clock's, and the jitter only adds:
	// not due either way (an idle tick ends here).
	if !ok || silence < need {
		a.hold(rel.Chat, gateNone)
		return brain.Reason{}, nil, false
	}
	u := a.jitterU(rel)
	loc := st.Location(rel)
	awake := a.waking(rel, loc).Between(last, now)
	// need is min_silence or more (or the follow-up's own threshold), so awake ≥ need
	// also stands for pressure ≥ 0.5.
	need += a.late(u)
	if awake < need {
		a.hold(rel.Chat, gateNone) // not due
		return brain.Reason{}, nil, false
	}
	p := brain.Pressure(awake, a.cfg.MinSilence)
	reserve := 0
	if !followup {
		reserve = 1 // the day's last wake is kept for a check-in or a follow-up
	}
	switch {
	case now.Before(a.cooledAt(rel, u)):
		a.hold(rel.Chat, gateCooldown)
	case a.quiet(now, rel, loc, u):
		a.hold(rel.Chat, gateQuietHours)
	case a.capped(rel, now.In(loc), reserve):
		a.hold(rel.Chat, gateMaxPerDay)
	case a.acks.Blocked(now, brain.SignalSocialPressure, rel.Chat, last, p):
		a.hold(rel.Chat, gateDeferred)
	case a.asleep(now, rel, loc, u, followup):
		a.hold(rel.Chat, gateSleep)
	case a.offHours(now, rel, loc, u, waitFor(followup), followup || !lateHabit(now, rel, loc)):
		a.hold(rel.Chat, gateOffHours)
	case !followup && a.early(now, rel, loc, u):
		a.hold(rel.Chat, gateEarly)
	default:
		a.hold(rel.Chat, gateNone)
		return proactiveReason(rel, silence, need, p, followup), loc, true
	}
	return brain.Reason{}, nil, false
}

// NextProactive is the earliest time at or after now that rule 4 lets the aggregator wake
// rel's chat, from the same gates the decision applies: rel's silence, cooldown and daily
// count, quiet hours in the user's zone loc, and the ack of ProactiveKey(chat) among acks
// (the live acks, as Acks(now) returns them). It is false when no time will: proactive
// contact is off, the chat is a group or dormant or has had no exchange yet, habituation
// has put contact out of reach, or an ack suppresses it. The answer assumes that nothing
// happens meanwhile (no message, no new ack) and that energy stays above LowEnergy
// (rule 3).
//
// NextProactive reads only the policy and its arguments, so unlike Decide it may be
// called from any goroutine (/status calls it from a command's run).
func (a *Aggregator) NextProactive(now time.Time, rel *brain.Relationship, loc *time.Location, acks []brain.Ack) (time.Time, bool) {
	if !a.cfg.Enabled || a.cfg.MaxPerDay == 0 || rel.Group || rel.Dormant {
		return time.Time{}, false
	}
	last := rel.LastExchange()
	if last.IsZero() {
		return time.Time{}, false
	}
	if loc == nil {
		loc = time.UTC
	}
	need, followup, ok := a.silenceNeeded(rel)
	if !ok {
		return time.Time{}, false
	}
	u := a.jitterU(rel)
	waking := a.waking(rel, loc)
	due, ok := waking.After(last, need+a.late(u))
	if !ok {
		return time.Time{}, false
	}
	next := later(now, due)
	next = later(next, a.cooledAt(rel, u))
	reserve := 0
	if !followup {
		reserve = 1
	}
	if local := now.In(loc); a.capped(rel, local, reserve) {
		next = later(next, brain.NextDay(now, loc))
	}
	key := ackKey{typ: brain.SignalSocialPressure, chat: rel.Chat}
	for _, ack := range acks {
		if parseKey(ack.Key) != key {
			continue
		}
		end, ok := ackEnd(ack, last, waking, a.cfg.MinSilence)
		if !ok {
			return time.Time{}, false
		}
		next = later(next, end)
	}
	// Every gate above, once passed, stays passed; quiet hours, sleep and active hours
	// come back daily, so they are applied last.
	return a.nextWaking(next, rel, loc, u, followup), true
}

// silenceNeeded is the silence rel needs before rule 4 may wake it, whether that wake is
// the follow-up, and false when habituation has put contact out of reach.
func (a *Aggregator) silenceNeeded(rel *brain.Relationship) (need time.Duration, followup, ok bool) {
	// A follow-up answers a question asked in a conversation they took part in; after an
	// opener of anima's that they have not answered, it would chase its own message.
	if rel.Status == brain.StatusAwaitingAnswer && !rel.FollowupDone && rel.UnansweredProactive == 0 {
		return a.cfg.FollowupAfter, true, true
	}
	base := a.cfg.MinSilence
	if rel.Status == brain.StatusClosed {
		base *= 4
	}
	need, ok = brain.Habituated(base, rel.UnansweredProactive)
	return need, false, ok
}

// waking is the waking time of rel's user in their zone loc: silence counts only outside
// the quiet hours and, once their rhythm is Ready, their inferred sleep.
func (a *Aggregator) waking(rel *brain.Relationship, loc *time.Location) brain.Waking {
	return brain.NewWaking(a.cfg.QuietHours, &rel.Rhythm, loc)
}

// cooledAt is when the cooldown after rel's last proactive wake ends, jittered at u (zero:
// there was none).
func (a *Aggregator) cooledAt(rel *brain.Relationship, u float64) time.Time {
	if rel.LastProactive.IsZero() {
		return time.Time{}
	}
	return rel.LastProactive.Add(a.cfg.Cooldown + a.late(u))
}

// capped reports whether rel has had MaxPerDay proactive wakes on local's day (local is a
// time in the user's zone), less reserve: the wakes kept for higher-ranked contact. A due
// check-in outranks a follow-up, which outranks plain missing-you pressure: with
// MaxPerDay ≥ 2, pressure (reserve 1) may not take the day's last wake; a follow-up or a
// check-in (reserve 0) may, and a check-in due at the same tick as a follow-up goes first
// (rule 4a runs before rule 4, one wake per chat).
func (a *Aggregator) capped(rel *brain.Relationship, local time.Time, reserve int) bool {
	limit := a.cfg.MaxPerDay
	if limit >= 2 {
		limit -= reserve
	}
	return sameDay(rel.ProactiveDay, local) && rel.ProactiveToday >= limit
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sameDay reports whether day ("2006-01-02") is local's date, without allocating.
func sameDay(day string, local time.Time) bool {
	if len(day) != 10 || day[4] != '-' || day[7] != '-' {
		return false
	}
	y, m, d := local.Date()
	return atoi(day[0:4]) == y && atoi(day[5:7]) == int(m) && atoi(day[8:10]) == d
}

// atoi parses a short run of ASCII digits; -1 if there is anything else.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
