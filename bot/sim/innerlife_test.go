package sim

import (
	"context"
	"testing"

	"github.com/anima-bot/anima/brain"
)

// TestChattyWeekDreamsAndChecksIn: the inner life runs in the replay. The concern the
// model opens on day 2 comes back as a check-in wake, and the nightly dream runs only on
// nights after the user wrote, at most once a night, each a model call.
func TestChattyWeekDreamsAndChecksIn(t *testing.T) {
	t.Parallel()
	tl := runExample(t, "chatty")
	checkins, dreams, wroteSince := 0, 0, 0
	nights := map[int]int{}
	for _, r := range tl.rows {
		for _, w := range r.wakes {
			if w == brain.ReasonConcernCheckin {
				checkins++
			}
		}
		if r.dreams > 0 {
			if wroteSince == 0 {
				t.Errorf("%s: a dream though the user wrote nothing since the last one", r.at)
			}
			if r.modelCalls < r.dreams {
				t.Errorf("%s: %d dream(s) but %d model call(s)", r.at, r.dreams, r.modelCalls)
			}
			dreams += r.dreams
			nights[r.at.In(tl.loc).YearDay()] += r.dreams
			wroteSince = 0
		}
		wroteSince += r.msgs[msgUser]
	}
	for day, n := range nights {
		if n > 1 {
			t.Errorf("day %d of the year: %d dreams in one night", day, n)
		}
	}
	// The user writes every day; the dream after day 7 falls outside the run.
	if want := tl.sc.Days - 1; dreams != want {
		t.Errorf("%d dreams in a chatty week, want %d (one each night after the user wrote)", dreams, want)
	}
	if checkins != 1 {
		t.Errorf("%d concern check-in wakes, want 1 (the concern opened on day 2)", checkins)
	}
	res := tl.result()
	if sum(res.Dreams) != dreams || sum(res.Checkins) != checkins {
		t.Errorf("per-day table: %d dreams, %d check-ins; rows: %d, %d", sum(res.Dreams), sum(res.Checkins), dreams, checkins)
	}
}

// TestNeverAnsweringUserCostsAtMostOneDreamANight: with the inner life switched on, the
// never-answering scenario does what it does without it, plus at most one dream (one
// model call) on each night after the user wrote — here only the first.
func TestNeverAnsweringUserCostsAtMostOneDreamANight(t *testing.T) {
	t.Parallel()
	sc := examples(t)["never-answers"]
	off := simConfig()
	off.Plugins.Innerlife.Enabled = false
	base, err := runScenario(context.Background(), off, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl := runExample(t, "never-answers")
	bm, bw, bc, bs, bf, br, bd := base.totals()
	m, w, c, s, f, r, d := tl.totals()
	if bd != 0 {
		t.Errorf("%d dreams with the inner life off", bd)
	}
	if m != bm || w != bw || s != bs || f != bf || r != br {
		t.Errorf("with the inner life: msgs %v, wakes %d, silent %d, failed %d, refused %d; without: %v, %d, %d, %d, %d",
			m, w, s, f, r, bm, bw, bs, bf, br)
	}
	if c != bc+d {
		t.Errorf("%d model calls, want %d without the inner life plus %d dream(s)", c, bc, d)
	}
	wroteDays := map[int]bool{}
	for _, row := range tl.rows {
		if row.msgs[msgUser] > 0 {
			wroteDays[row.at.In(tl.loc).YearDay()] = true
		}
	}
	if d < 1 || d > len(wroteDays) {
		t.Errorf("%d dreams; want 1..%d (one per night after a day the user wrote)", d, len(wroteDays))
	}
	for _, row := range tl.rows {
		if row.dreams > 0 && !wroteDays[row.at.In(tl.loc).YearDay()-1] {
			t.Errorf("%s: a dream after a day the user did not write", row.at)
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
