package sim

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
)

// This file measures the timing of a run (issue 17's figures): whether anima wrote when
// the user is around, how spread its send times are, whether due check-ins went out, and
// whether follow-ups went into the user's sleep.

// historyDays is the warm-up a scenario gets before its sends are judged against the
// user's active hours: a week, so the profile has seen each day of the week once.
const historyDays = 7

// simSend is a message anima sent on its own initiative: a proactive message, a
// follow-up or a concern's check-in.
type simSend struct {
	at   time.Time
	code string // the wake's reason code
	ref  string // a check-in's concern
	// trigger is when the rule that let the wake out opened, without jitter: the waking
	// silence it needed (min_silence × 4 if closed × 2^unanswered, or followup_after) or the
	// check-in's due time, the cooldown after the previous wake, and the end of the
	// quiet hours it waited out, whichever was last.
	trigger time.Time
	// ready and live: whether the live profile (the relationship's, as the wake saw it)
	// was Ready, and said the send's hour was active.
	ready, live bool
}

// trigger is the nominal (unjittered) moment the wake w at now was let out under pol:
// see simSend.trigger. prev is the previous proactive wake of the chat (zero: none).
func trigger(pol brain.ProactivePolicy, w brain.Wake, now, prev time.Time, loc *time.Location) time.Time {
	var at time.Time
	last := w.Rel.LastExchange()
	// Silence counts in the user's waking time, as the rule counts it.
	waking := brain.NewWaking(pol.QuietHours, &w.Rel.Rhythm, loc)
	switch w.Reason.Code {
	case brain.ReasonFollowup:
		at, _ = waking.After(last, pol.FollowupAfter)
	case brain.ReasonProactive:
		base := pol.MinSilence
		if w.Rel.Status == brain.StatusClosed {
			base *= 4
		}
		need, _ := brain.Habituated(base, w.Rel.UnansweredProactive)
		at, _ = waking.After(last, need)
	default: // a check-in: when its thought came due
		for _, s := range w.Signals {
			if at.IsZero() || s.At.Before(at) {
				at = s.At
			}
		}
	}
	if !prev.IsZero() && prev.Add(pol.Cooldown).After(at) {
		at = prev.Add(pol.Cooldown)
	}
	if q := quietEnd(pol.QuietHours, now, loc); q.After(at) {
		at = q
	}
	return at
}

// quietEnd is the end of the last quiet-hours window before now within a day (zero if
// none): the minute after the last quiet minute.
func quietEnd(q brain.QuietHours, now time.Time, loc *time.Location) time.Time {
	if q.IsZero() {
		return time.Time{}
	}
	for m := time.Duration(0); m < 24*time.Hour; m += time.Minute {
		if t := now.Add(-m); q.Contains(t, loc) {
			return t.Truncate(time.Minute).Add(time.Minute)
		}
	}
	return time.Time{}
}

// timing is a run's figures.
type timing struct {
	profile brain.Rhythm // learned from the user's message times over the whole run
	judged  int          // sends on or after the warm-up
	// inside is how many of those fell inside the user's active hours as the gate saw
	// them: by the live profile at the send (learned from the messages before it);
	// insideEnd by the end-of-run profile, with hindsight of the messages after it.
	inside, insideEnd int
	sends             int
	// clock is the number of distinct local minutes of the day among the sends; offsets
	// the number of distinct minute offsets from their triggers, offMin and offMax their
	// range.
	clock, offsets int
	offMin, offMax time.Duration
	// checkinsDue, checkinsSent and checkinsInDay: check-ins that came due, check-in
	// messages sent, and those sent within a day of coming due; checkinsCarried those the
	// user's own message came first for (the reply's run had them in its prompt), within
	// a day of coming due.
	checkinsDue, checkinsSent, checkinsInDay, checkinsCarried int
	// followups and followupsAsleep: follow-ups sent, and those sent in the user's inferred
	// sleep (the night, 22–7, while the profile is not ready).
	followups, followupsAsleep int
	// list is each send, for the listing in summary.txt.
	list []sendRow
	// weeks counts, for the run's first two weeks, anima's first messages (sends) and
	// those inside the user's hours as the scenario defines them (theirHours). The first
	// week is what anima does while it learns, the second what it does once it knows.
	weeks [2]struct{ inside, sends int }
}

// theirMargin is how far outside a window in which the scenario has the user write a
// first message may fall and still be inside their hours.
const theirMargin = time.Hour

// theirHours reports whether at is inside the user's hours as the scenario defines them,
// whatever anima has learned: within theirMargin of a window in which a write rule puts
// one of their own messages (its at ± jitter, on a day it applies), chance aside — and a
// day off aside too: a day they do not write keeps the hours of its kind of day (a
// weekday's, a weekend's), as a day a rule's chance skips does. Late, never early sends a
// plain first message only on a day they have not come; it is judged by the hours they
// keep on such a day.
func (t *timeline) theirHours(at time.Time) bool {
	local := at.In(t.loc)
	day := int(local.Sub(t.start).Hours()/24) + 1
	for d := day - 1; d <= day+1; d++ { // a window may wrap midnight
		if d < 1 || d > t.sc.Days {
			continue
		}
		midnight := time.Date(t.start.Year(), t.start.Month(), t.start.Day()+d-1, 0, 0, 0, 0, t.loc)
		for _, w := range t.sc.User.Writes {
			if len(w.Days) > 0 && !slices.Contains(w.Days, d) {
				continue
			}
			of, _ := clockTime(w.At) // validated
			c, reach := midnight.Add(of), w.Jitter.Std()+theirMargin
			if !at.Before(c.Add(-reach)) && !at.After(c.Add(reach)) {
				return true
			}
		}
	}
	return false
}

// sendRow is one send in the listing: when, why, and whether the live profile and the
// end-of-run profile called its hour active.
type sendRow struct {
	s      simSend
	judged bool
	end    bool
}

// measure computes the run's figures. A send is judged inside the user's active hours by
// the definition the rhythm gate applies: the live profile (brain.Rhythm.Active on the
// relationship's profile as the wake saw it, learned from the messages the user wrote of
// their own accord before the send). The profile rebuilt from all the run's own-accord
// messages (not answers to anima's first contact), as it stands at the end, gives the
// hindsight figure beside it, the inferred sleep and the summary of the active hours.
func (t *timeline) measure() timing {
	var f timing
	// As the core loop (brain/loop/step.go): answers to anima's first contact and the
	// conversation it opened are left out (Relationship.OwnMessage).
	var rel brain.Relationship
	for _, r := range t.rows {
		for range r.msgs[msgUser] {
			if rel.OwnMessage(r.at, t.loc) {
				rel.Rhythm.Observe(r.at, t.loc)
			}
			rel.MarkUserMessage(r.at)
		}
		for k := msgReply; k < msgKinds; k++ {
			kind := brain.KindReply
			switch k {
			case msgProactive:
				kind = brain.KindProactive
			case msgFollowup:
				kind = brain.KindFollowup
			}
			for range r.msgs[k] {
				rel.MarkSent(r.at, kind)
			}
		}
	}
	f.profile = rel.Rhythm
	warm := t.start.AddDate(0, 0, historyDays)
	if t.sc.Days <= historyDays {
		warm = t.start // too short for a warm-up: every send is judged
	}
	clock := map[int]bool{}
	offsets := map[time.Duration]bool{}
	for _, s := range t.sends {
		f.sends++
		local := s.at.In(t.loc)
		clock[local.Hour()*60+local.Minute()] = true
		off := time.Duration(math.Floor(s.at.Sub(s.trigger).Minutes())) * time.Minute
		if len(offsets) == 0 || off < f.offMin {
			f.offMin = off
		}
		if len(offsets) == 0 || off > f.offMax {
			f.offMax = off
		}
		offsets[off] = true
		row := sendRow{s: s, end: f.profile.Active(s.at, t.loc)}
		if week := int(s.at.Sub(t.start) / (historyDays * 24 * time.Hour)); week < len(f.weeks) {
			f.weeks[week].sends++
			if t.theirHours(s.at) {
				f.weeks[week].inside++
			}
		}
		if !s.at.Before(warm) {
			row.judged = true
			f.judged++
			if s.ready && s.live {
				f.inside++
			}
			if row.end {
				f.insideEnd++
			}
		}
		f.list = append(f.list, row)
		switch s.code {
		case brain.ReasonFollowup:
			f.followups++
			if f.asleep(s.at, t.loc) {
				f.followupsAsleep++
			}
		case brain.ReasonConcernCheckin:
			f.checkinsSent++
		}
	}
	f.clock, f.offsets = len(clock), len(offsets)
	f.checkinsDue = len(t.due)
	for ref, due := range t.due {
		if at, ok := t.carried[ref]; ok && at.Sub(due) <= 24*time.Hour {
			f.checkinsCarried++
		}
		for _, s := range t.sends {
			if s.code == brain.ReasonConcernCheckin && s.ref == ref && s.at.Sub(due) <= 24*time.Hour {
				f.checkinsInDay++
				break
			}
		}
	}
	return f
}

// asleep is the figures' sleep: the profile's inferred sleep once it is ready, else the
// night (22–7).
func (f *timing) asleep(at time.Time, loc *time.Location) bool {
	if f.profile.Ready() {
		return f.profile.Asleep(at, loc)
	}
	h := at.In(loc).Hour()
	return h >= 22 || h < 7
}

// write prints the figures for summary.txt.
func (f timing) write(w io.Writer, days int, loc *time.Location) {
	fmt.Fprintln(w, "\nwhen anima wrote first (proactive messages, follow-ups and check-ins):")
	judged := fmt.Sprintf("from day %d, after a week of history", historyDays+1)
	if days <= historyDays {
		judged = "all days (the run is too short for a week of history)"
	}
	share := 0.0
	if f.judged > 0 {
		share = 100 * float64(f.inside) / float64(f.judged)
	}
	fmt.Fprintf(w, "  inside the user's active hours, %s: %d of %d (%.0f%%) by what anima had learned when it wrote (what its rhythm gate saw); %d of %d in hindsight, by what the whole run shows\n",
		judged, f.inside, f.judged, share, f.insideEnd, f.judged)
	fmt.Fprintf(w, "  first messages inside their hours (within %s of a time the scenario has them write that day): in week 1, %d of %d",
		brain.Duration(theirMargin),
		f.weeks[0].inside, f.weeks[0].sends)
	if days > historyDays {
		fmt.Fprintf(w, "; in week 2, %d of %d", f.weeks[1].inside, f.weeks[1].sends)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  active hours anima learned: %s; the user's sleep as inferred: %s\n", activeSummary(&f.profile), sleepSummary(&f.profile))
	fmt.Fprintf(w, "  send times: %d messages at %d different minutes of the day, with %d different delays after the moment their rule allowed them",
		f.sends, f.clock, f.offsets)
	if f.sends > 0 {
		fmt.Fprintf(w, " (%s to %s)", brain.Duration(f.offMin), brain.Duration(f.offMax))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  check-ins: %d came due; anima sent %d, %d of them within a day of coming due; %d it took up in a reply instead (the user wrote first, within a day)\n",
		f.checkinsDue, f.checkinsSent, f.checkinsInDay, f.checkinsCarried)
	fmt.Fprintf(w, "  follow-ups: %d sent, %d of them in the user's inferred sleep\n", f.followups, f.followupsAsleep)
	fmt.Fprintln(w, "  each message anima wrote first, in the user's local time: why, how long after its rule allowed it, whether its hour")
	fmt.Fprintln(w, "  was one of the user's active hours as anima knew them then and in hindsight, and whether it counts in the share above:")
	for _, r := range f.list {
		counted := "not counted (the first week)"
		if r.judged {
			counted = "counted"
		}
		fmt.Fprintf(w, "    %s  %-9s %7s after  then: %-16s in hindsight: %-12s %s\n", r.s.at.In(loc).Format("Mon 02 Jan 15:04"), reasonWord(r.s.code),
			brain.Duration(r.s.at.Sub(r.s.trigger).Truncate(time.Minute)), liveWord(r.s), activeWord(r.end), counted)
	}
}

// reasonWord names a wake's reason code in words.
func reasonWord(code string) string {
	switch code {
	case brain.ReasonFollowup:
		return "follow-up"
	case brain.ReasonConcernCheckin:
		return "check-in"
	}
	return code
}

// liveWord says what the live profile said of a send's hour.
func liveWord(s simSend) string {
	if !s.ready {
		return "not learned yet"
	}
	return activeWord(s.live)
}

func activeWord(on bool) string {
	if on {
		return "active"
	}
	return "not active"
}

// activeSummary says how many hours of the week are active, or that the profile is not
// ready.
func activeSummary(r *brain.Rhythm) string {
	if !r.Ready() {
		return fmt.Sprintf("not enough history (%d messages over %d days)", r.Messages, r.Days)
	}
	n := 0
	for _, on := range r.ActiveHours() {
		if on {
			n++
		}
	}
	return fmt.Sprintf("%d of 168 hours of the week (%d messages over %d days)", n, r.Messages, r.Days)
}

// sleepSummary names the inferred sleep as local hours.
func sleepSummary(r *brain.Rhythm) string {
	hs := r.SleepHours()
	if len(hs) == 0 {
		return "none (the night, 22–7, stands in)"
	}
	return fmt.Sprintf("%02d:00–%02d:00", hs[0], (hs[len(hs)-1]+1)%24)
}
