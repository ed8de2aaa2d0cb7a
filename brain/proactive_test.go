package brain_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the DST cases must not depend on the host's zoneinfo

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
)

func mustQuiet(t *testing.T, s string) brain.QuietHours {
	t.Helper()
	q, err := brain.ParseQuietHours(s)
	if err != nil {
		t.Fatalf("ParseQuietHours(%q) = %v", s, err)
	}
	return q
}

func TestQuietHours(t *testing.T) {
	t.Parallel()
	at := func(hhmm string) time.Time {
		tm, err := time.Parse("15:04", hhmm)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	h := func(s string) time.Duration { d, _ := time.ParseDuration(s); return d }
	tests := []struct {
		in         string
		start, end time.Duration
		ok         bool
		inside     []string
		outside    []string
	}{
		{"22:30-08:30", h("22h30m"), h("8h30m"), true, []string{"22:30", "23:59", "00:00", "08:29"}, []string{"08:30", "12:00", "22:29"}},
		{"09:00-17:00", h("9h"), h("17h"), true, []string{"09:00", "16:59"}, []string{"08:59", "17:00", "23:00"}},
		{"22:00-00:00", h("22h"), 0, true, []string{"22:00", "23:59"}, []string{"00:00", "21:59"}},
		{"00:00-06:00", 0, h("6h"), true, []string{"00:00", "05:59"}, []string{"06:00", "23:59"}},
		{"", 0, 0, false, nil, []string{"00:00", "23:00"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			q := mustQuiet(t, tc.in)
			start, end, ok := q.Offsets()
			if start != tc.start || end != tc.end || ok != tc.ok {
				t.Errorf("Offsets() = %v, %v, %v; want %v, %v, %v", start, end, ok, tc.start, tc.end, tc.ok)
			}
			if q.String() != tc.in || q.IsZero() == tc.ok {
				t.Errorf("String() = %q, IsZero() = %v; want %q, %v", q, q.IsZero(), tc.in, !tc.ok)
			}
			for _, s := range tc.inside {
				if !q.Contains(at(s), time.UTC) {
					t.Errorf("Contains(%s) = false, want true", s)
				}
			}
			for _, s := range tc.outside {
				if q.Contains(at(s), time.UTC) {
					t.Errorf("Contains(%s) = true, want false", s)
				}
			}
		})
	}
}

func TestQuietHoursInvalid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"22:30", "2230-0830", "24:00-01:00", "25:00-08:00", "22:60-01:00", "7:00-9:00", "07:00-09:0", "22:3-08:00",
		"aa:bb-cc:dd", "22:30-08:30-09:00", "22:30 - 08:30", " 01:00 - 06:15 ", "+1:00-02:00", "08:00-08:00", "-",
	} {
		t.Run(in, func(t *testing.T) {
			q, err := brain.ParseQuietHours(in)
			if err == nil {
				t.Fatalf("ParseQuietHours(%q) = %v, want an error", in, q)
			}
			if !strings.Contains(err.Error(), `"HH:MM-HH:MM"`) && !strings.Contains(err.Error(), `use "" for no quiet hours`) {
				t.Errorf("error %q does not say what is allowed", err)
			}
			if !q.IsZero() || q.Contains(time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC), time.UTC) {
				t.Errorf("a failed parse left a window: %v", q)
			}
		})
	}
}

func TestQuietHoursText(t *testing.T) {
	t.Parallel()
	var v struct {
		Q brain.QuietHours `json:"q"`
	}
	if err := json.Unmarshal([]byte(`{"q":"23:15-06:45"}`), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Q.Equal(mustQuiet(t, "23:15-06:45")) {
		t.Errorf("decoded %v", v.Q)
	}
	out, err := json.Marshal(v)
	if err != nil || string(out) != `{"q":"23:15-06:45"}` {
		t.Errorf("Marshal = %s, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"q":"23:15"}`), &v); err == nil || !strings.Contains(err.Error(), `"HH:MM-HH:MM"`) {
		t.Errorf("bad text: %v", err)
	}
}

// TestQuietHoursNextEnd: NextEnd is the first moment Contains is false, checked second
// by second (from t, over a day) across daylight saving changes in both hemispheres.
func TestQuietHoursNextEnd(t *testing.T) {
	t.Parallel()
	berlin, ny, howe := braintest.Zone(t, "Europe/Berlin"), braintest.Zone(t, "America/New_York"), braintest.Zone(t, "Australia/Lord_Howe")
	tests := []struct {
		name  string
		quiet string
		loc   *time.Location
		from  time.Time // t, stepped by step over a day
		step  time.Duration
	}{
		{"wraps midnight, UTC", "22:30-08:30", time.UTC, time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC), 7 * time.Minute},
		{"same day", "09:00-17:00", time.UTC, time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC), 11 * time.Minute},
		{"nil zone is UTC", "22:30-08:30", nil, time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC), 13 * time.Minute},
		{"spring forward skips the end", "22:00-02:30", berlin, time.Date(2026, 3, 28, 21, 0, 0, 0, berlin), 5 * time.Minute},
		{"spring forward, US", "22:00-02:30", ny, time.Date(2026, 3, 7, 21, 0, 0, 0, ny), 5 * time.Minute},
		{"fall back repeats the end", "22:00-02:30", berlin, time.Date(2026, 10, 24, 21, 0, 0, 0, berlin), 5 * time.Minute},
		{"fall back repeats the end, US", "22:00-01:30", ny, time.Date(2026, 10, 31, 21, 0, 0, 0, ny), 5 * time.Minute},
		{"half-hour shift", "22:00-01:45", howe, time.Date(2026, 4, 4, 21, 0, 0, 0, howe), 5 * time.Minute},
		{"half-hour shift forward", "22:00-02:15", howe, time.Date(2026, 10, 3, 21, 0, 0, 0, howe), 5 * time.Minute},
		{"no quiet hours", "", berlin, time.Date(2026, 3, 28, 21, 0, 0, 0, berlin), 17 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := mustQuiet(t, tc.quiet)
			ends := secondEnds(q, tc.loc, tc.from, 24*time.Hour)
			for at := tc.from; at.Before(tc.from.Add(24 * time.Hour)); at = at.Add(tc.step) {
				want := ends[at.Sub(tc.from)/time.Second]
				if got := q.NextEnd(at, tc.loc); !got.Equal(want) {
					t.Fatalf("NextEnd(%s) = %s, want %s", at.In(zoneOr(tc.loc)), got.In(zoneOr(tc.loc)), want.In(zoneOr(tc.loc)))
				}
			}
		})
	}
}

// secondEnds returns, for each whole second i from from over span, the first second at or
// after from+i that q does not contain: the second-by-second answer for each, walked once
// backward from the first free second after the span.
func secondEnds(q brain.QuietHours, loc *time.Location, from time.Time, span time.Duration) []time.Time {
	end := from.Add(span)
	for q.Contains(end, loc) {
		end = end.Add(time.Second)
	}
	n := int(end.Sub(from) / time.Second)
	ends := make([]time.Time, n+1)
	ends[n] = end
	for i := n - 1; i >= 0; i-- {
		if s := from.Add(time.Duration(i) * time.Second); q.Contains(s, loc) {
			ends[i] = ends[i+1]
		} else {
			ends[i] = s
		}
	}
	return ends
}

func zoneOr(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}

func TestNextDay(t *testing.T) {
	t.Parallel()
	berlin := braintest.Zone(t, "Europe/Berlin")
	tests := []struct {
		t    time.Time
		loc  *time.Location
		want time.Time
	}{
		{time.Date(2026, 3, 2, 23, 59, 0, 0, time.UTC), nil, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 3, 2, 23, 30, 0, 0, time.UTC), berlin, time.Date(2026, 3, 4, 0, 0, 0, 0, berlin)}, // 00:30 local on the 3rd
		{time.Date(2026, 3, 28, 12, 0, 0, 0, berlin), berlin, time.Date(2026, 3, 29, 0, 0, 0, 0, berlin)},  // a 23-hour day follows
	}
	for _, tc := range tests {
		if got := brain.NextDay(tc.t, tc.loc); !got.Equal(tc.want) {
			t.Errorf("NextDay(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
}

func TestDefaultProactivePolicy(t *testing.T) {
	t.Parallel()
	p := brain.DefaultProactivePolicy()
	if !p.Enabled || p.MinSilence != 6*time.Hour || p.Cooldown != 3*time.Hour || p.FollowupAfter != 3*time.Hour ||
		p.QuietHours.String() != "22:30-08:30" || p.MaxPerDay != 2 {
		t.Errorf("DefaultProactivePolicy() = %+v, want the documented defaults", p)
	}
}
