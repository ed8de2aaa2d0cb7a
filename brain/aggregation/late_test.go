package aggregation

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

// eveningAt is a rhythm learned over two weeks from a person in zone UTC who first writes
// at 18:40 and again at 22:05 every day.
func eveningAt() brain.Rhythm { return daily(18*time.Hour+40*time.Minute, 22*time.Hour+5*time.Minute) }

// TestLateNeverEarly: an evening person who last wrote at 22:05 the night before is not
// written to before her usual 18:40 has passed without her by the margin (45 min, plus the
// jitter): the six waking hours of silence came due in the afternoon, and anima used to
// write at 18:00–18:50, just before she would have. On a day she came at her usual time
// nothing goes out; once her rhythm is not Ready the early days' rule stands.
func TestLateNeverEarly(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Jitter = time.Hour
	sunday := time.Date(2026, 3, 1, 22, 5, 0, 0, time.UTC) // her last message
	usual := time.Date(2026, 3, 2, 18, 40, 0, 0, time.UTC)

	s, at := idleFor(t, cfg, sunday, 24*time.Hour, eveningAt()) // a day she did not come
	if min := usual.Add(lateMargin + jitterMin); at[0].Before(min) {
		t.Errorf("first wake at %s; want not before %s (her usual time, the margin and the least jitter)", at[0].Format("Mon 15:04"), min.Format("15:04"))
	}
	if at[0].After(usual.Add(lateMargin + jitterMin + cfg.Jitter)) {
		t.Errorf("first wake at %s; want within the jitter after the margin", at[0].Format("Mon 15:04"))
	}

	// She came at 18:40: the day did not pass without her.
	s = newSim(t, cfg, time.UTC, usual)
	s.talk(1, brain.StatusIdle).Rhythm = eveningAt()
	s.run(5*time.Hour, time.Minute) // to 23:40
	if at := s.proactive(); len(at) != 0 {
		t.Errorf("wakes %v on a day she came at her usual time; want none", at)
	}

	// Not Ready: the early days' rule (six waking hours, her hours seen so far).
	s = newSim(t, cfg, time.UTC, sunday)
	s.talk(1, brain.StatusIdle)
	s.run(24*time.Hour, time.Minute)
	if at := s.proactive(); len(at) == 0 || !at[0].Before(usual) {
		t.Errorf("wakes %v without a Ready rhythm; want the first before 18:40 as before", at)
	}
}

// TestLateWeekendApart: an office worker who writes at 12:15 on weekdays and at 15:30 at
// weekends is not written to at a weekday's lunch hour on a Saturday: the Saturday's
// usual time is the afternoon's.
func TestLateWeekendApart(t *testing.T) {
	t.Parallel()
	var r brain.Rhythm
	start := time.Date(2026, 2, 9, 0, 0, 0, 0, time.UTC) // a Monday
	for d := range 21 {
		day := start.AddDate(0, 0, d)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			r.Observe(day.Add(15*time.Hour+30*time.Minute), time.UTC)
			r.Observe(day.Add(16*time.Hour+45*time.Minute), time.UTC)
			continue
		}
		r.Observe(day.Add(12*time.Hour+15*time.Minute), time.UTC)
		r.Observe(day.Add(13*time.Hour+30*time.Minute), time.UTC)
	}
	cfg := noQuiet()
	cfg.Jitter = time.Hour
	friday := time.Date(2026, 3, 6, 13, 30, 0, 0, time.UTC)
	_, at := idleFor(t, cfg, friday, 36*time.Hour, r) // to Sunday 01:30, a Saturday she did not come
	if sat := time.Date(2026, 3, 7, 15, 30, 0, 0, time.UTC).Add(lateMargin + jitterMin); at[0].Before(sat) {
		t.Errorf("first wake at %s; want after her weekend time, 15:30, and the margin", at[0].Format("Mon 15:04"))
	}
}

// TestLateTypicalGap: the silence a plain proactive wake answers is at least the person's
// typical gap between visits (here about 23 h: they write once a day at 12:15), not only
// min_silence: a message 6 h after a lunch chat reads as clingy.
func TestLateTypicalGap(t *testing.T) {
	t.Parallel()
	var r brain.Rhythm
	start := time.Date(2026, 2, 16, 0, 0, 0, 0, time.UTC)
	for d := range 14 {
		r.Observe(start.AddDate(0, 0, d).Add(12*time.Hour+15*time.Minute), time.UTC)
		r.Observe(start.AddDate(0, 0, d).Add(12*time.Hour+25*time.Minute), time.UTC)
	}
	if g := r.TypicalGap(); g < 20*time.Hour || g > 26*time.Hour {
		t.Fatalf("typical gap %s; want about a day", g)
	}
	cfg := noQuiet()
	cfg.Jitter = 0
	// She skipped Monday's lunch; they last talked on Sunday at 20:00.
	s := newSim(t, cfg, time.UTC, time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC))
	s.talk(1, brain.StatusIdle).Rhythm = r
	s.run(48*time.Hour, time.Minute)
	at := s.proactive()
	if len(at) == 0 || at[0].Sub(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)) < r.TypicalGap() {
		t.Errorf("wakes %v; want the first at least the typical gap (%s) after Sunday 20:00", at, r.TypicalGap())
	}
}

// TestNoFollowupToOwnOpener: after anima's own first message went unanswered (it asked,
// awaiting_answer), no follow-up comes: the chat waits for plain pressure, habituated (12 h
// of waking silence for one unanswered message); anima used to follow its own opener up
// after followup_after (3 h).
func TestNoFollowupToOwnOpener(t *testing.T) {
	t.Parallel()
	cfg := noQuiet()
	cfg.Jitter = 0
	s := newSim(t, cfg, time.UTC, monday)
	rel := s.talk(1, brain.StatusIdle)
	rel.MarkSent(monday, brain.KindProactive) // anima's opener, a question
	rel.Status = brain.StatusAwaitingAnswer
	s.run(24*time.Hour, time.Minute)
	if n := s.count(brain.ReasonFollowup); n != 0 {
		t.Errorf("%d follow-ups to anima's own unanswered opener; want 0", n)
	}
	if at := s.proactive(); len(at) == 0 || at[0].Sub(monday) < 12*time.Hour {
		t.Errorf("wakes %v; want the first after 12 h (min_silence × 2 for one unanswered opener)", at)
	}

	// A question anima asked in a conversation they took part in still gets its follow-up.
	s = newSim(t, cfg, time.UTC, monday)
	s.talk(1, brain.StatusAwaitingAnswer)
	s.run(6*time.Hour, time.Minute)
	if n := s.count(brain.ReasonFollowup); n != 1 {
		t.Errorf("%d follow-ups to a question in a conversation; want 1", n)
	}
}

// TestThoughtNotJustBeforeThem (issue 35): a gated thought (a check-in, a share) due in
// the hour before an evening person's usual 18:40 waits: if she comes, the run answering
// her carries it; if she does not, it goes once her time has passed by the margin. It used
// to go out at 17:53 and she wrote herself minutes later.
func TestThoughtNotJustBeforeThem(t *testing.T) {
	t.Parallel()
	loc := time.UTC
	rel := &brain.Relationship{Chat: 1, Rhythm: eveningAt(), LastUserMsg: time.Date(2026, 3, 1, 22, 5, 0, 0, loc)}
	cfg := noQuiet()
	cfg.Jitter = time.Hour
	a := New(cfg, Options{})
	u := a.jitterU(rel)
	usual := time.Date(2026, 3, 2, 18, 40, 0, 0, loc)
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{usual.Add(-2 * time.Hour), false},            // well before: a check-in due then goes
		{usual.Add(-47 * time.Minute), true},          // 17:53, the hour before
		{usual.Add(30 * time.Minute), true},           // she may still come
		{usual.Add(lateMargin + a.late(u)), false},    // her time passed without her
		{usual.Add(lateMargin + jitterMin - 1), true}, // not yet past the margin and the jitter
	} {
		if got := a.preempts(tc.at, rel, loc, u); got != tc.want {
			t.Errorf("preempts at %s = %v, want %v", tc.at.Format("15:04"), got, tc.want)
		}
	}
	came := *rel
	came.LastUserMsg = usual.Add(-10 * time.Minute)
	if a.preempts(usual.Add(30*time.Minute), &came, loc, u) {
		t.Error("she came at her time: a thought after it pre-empts nothing")
	}
}

// officeWorker is the rhythm of an office worker over her first days from Monday 2 March
// 2026, in loc: weekdays at 12:15 and 21:00, weekends at 15:30.
func officeWorker(days int, loc *time.Location) brain.Rhythm {
	var r brain.Rhythm
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, loc) // a Monday
	for d := range days {
		day := start.AddDate(0, 0, d)
		if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
			r.Observe(day.Add(15*time.Hour+30*time.Minute), loc)
			continue
		}
		r.Observe(day.Add(12*time.Hour+15*time.Minute), loc)
		r.Observe(day.Add(21*time.Hour), loc)
	}
	return r
}

// TestYesterdayOfAnotherKind (issue 35): that an office worker skipped Friday's lunch
// message says nothing of her Saturday, when she writes at 15:30: a "missing you" waits
// for Saturday's own time to pass without her, not for Friday's.
func TestYesterdayOfAnotherKind(t *testing.T) {
	t.Parallel()
	loc := time.UTC
	r := officeWorker(12, loc)
	// Friday the 13th went by without her; it is Saturday 12:58.
	rel := &brain.Relationship{Chat: 1, Rhythm: r, LastUserMsg: time.Date(2026, 3, 12, 21, 0, 0, 0, loc)}
	a := New(noQuiet(), Options{})
	if !a.early(time.Date(2026, 3, 14, 12, 58, 0, 0, loc), rel, loc, 0) {
		t.Error("Saturday 12:58 is not early, though her Saturday time (15:30) is still ahead")
	}
	if a.early(time.Date(2026, 3, 14, 17, 0, 0, 0, loc), rel, loc, 0) {
		t.Error("Saturday 17:00, her time passed without her, is still early")
	}
}

// TestUnknownKindOfDay (issue 35): an office worker known on weekdays (12:15) but not yet
// seen on a weekend gets no plain first message on her first Saturday, morning or evening
// (her weekday lunch says nothing of it); someone with no habit yet is left to the early
// days' rules.
func TestUnknownKindOfDay(t *testing.T) {
	t.Parallel()
	loc := time.UTC
	r := officeWorker(5, loc) // Monday to Friday
	rel := &brain.Relationship{Chat: 1, Rhythm: r, LastUserMsg: time.Date(2026, 3, 6, 21, 0, 0, 0, loc)}
	a := New(noQuiet(), Options{})
	for _, at := range []time.Time{time.Date(2026, 3, 7, 11, 6, 0, 0, loc), time.Date(2026, 3, 7, 19, 0, 0, 0, loc)} {
		if !a.early(at, rel, loc, 0) {
			t.Errorf("%s, a weekend not known yet, is not early", at.Format("Mon 15:04"))
		}
	}
	if !a.early(time.Date(2026, 3, 9, 12, 40, 0, 0, loc), rel, loc, 0) {
		t.Error("Monday 12:40, before her lunch time has passed by the margin, is not early")
	}
	if a.early(time.Date(2026, 3, 9, 13, 30, 0, 0, loc), rel, loc, 0) {
		t.Error("Monday 13:30, her lunch passed without her, is early")
	}
	// /status says so: from Saturday morning, the next time is Monday, past her lunch.
	next, ok := a.NextProactive(time.Date(2026, 3, 7, 11, 6, 0, 0, loc), rel, loc, nil)
	if monday := time.Date(2026, 3, 9, 13, 0, 0, 0, loc); !ok || next.Before(monday) {
		t.Errorf("NextProactive on Saturday = %s, %v; want Monday after 13:00", next.Format("Mon 15:04"), ok)
	}
	var none brain.Relationship
	none.Chat, none.LastUserMsg = 2, rel.LastUserMsg
	none.Rhythm.Observe(rel.LastUserMsg, loc)
	if a.early(time.Date(2026, 3, 7, 11, 6, 0, 0, loc), &none, loc, 0) {
		t.Error("with no habit known, the early days' rules are not left to decide")
	}
}

// TestHoursInsideQuietHours (issue 35): a student seen only from 23:00 to 01:00, all of it
// inside the quiet hours (22:30–08:30), gets a first message in the half hour before the
// quiet hours begin, the edge nearest her own hours, not in the middle of the afternoon
// (which "any waking hour" gave before).
func TestHoursInsideQuietHours(t *testing.T) {
	t.Parallel()
	loc := time.UTC
	cfg := brain.DefaultProactivePolicy()
	cfg.Jitter = 0
	a := New(cfg, Options{})
	var rel brain.Relationship
	rel.Chat = 1
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, loc)
	for d := range 3 {
		rel.Rhythm.Observe(start.AddDate(0, 0, d).Add(23*time.Hour+20*time.Minute), loc)
	}
	thu := start.AddDate(0, 0, 3)
	if !a.offHours(thu.Add(15*time.Hour), &rel, loc, 0, pressurePatience, true) {
		t.Error("15:00 is not off her hours, though the hour before hers (22:00) comes today")
	}
	if a.offHours(thu.Add(22*time.Hour+10*time.Minute), &rel, loc, 0, pressurePatience, true) {
		t.Error("22:10, the hour before hers and outside the quiet hours, is off her hours")
	}
}
