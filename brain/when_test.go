package brain

import (
	"testing"
	"time"
)

func TestWhenWords(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, berlin) // a Monday morning
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-time.Minute), "now"},
		{now.Add(40 * time.Minute), "within the hour"},
		{now.Add(90 * time.Minute), "later this morning"},
		{time.Date(2026, 3, 2, 19, 0, 0, 0, berlin), "this evening"},
		{time.Date(2026, 3, 2, 23, 0, 0, 0, berlin), "later tonight"},
		{time.Date(2026, 3, 3, 1, 30, 0, 0, berlin), "late tonight"},
		{time.Date(2026, 3, 3, 8, 30, 0, 0, berlin), "tomorrow morning"},
		{time.Date(2026, 3, 3, 18, 0, 0, 0, berlin), "tomorrow evening"},
		{time.Date(2026, 3, 6, 18, 0, 0, 0, berlin), "on Friday evening"},
		{time.Date(2026, 3, 7, 2, 0, 0, 0, berlin), "on Friday night"},
		{time.Date(2026, 3, 12, 9, 0, 0, 0, berlin), "on Thu 12 Mar"},
		// The words follow the given zone, not the instant's: 08:30 UTC is 09:30 in Berlin.
		{time.Date(2026, 3, 3, 8, 30, 0, 0, time.UTC), "tomorrow morning"},
	} {
		if got := WhenWords(tc.at, now, berlin); got != tc.want {
			t.Errorf("WhenWords(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

func TestAgoWords(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 5, 20, 0, 0, 0, time.UTC) // a Thursday evening
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-2 * time.Minute), "just now"},
		{now.Add(-25 * time.Minute), "25 minutes ago"},
		{now.Add(-2 * time.Hour), "earlier today"},
		{time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC), "this morning"},
		{time.Date(2026, 3, 5, 1, 0, 0, 0, time.UTC), "last night"},
		{time.Date(2026, 3, 4, 23, 0, 0, 0, time.UTC), "last night"},
		{time.Date(2026, 3, 4, 21, 14, 0, 0, time.UTC), "yesterday evening"},
		{time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), "on Monday"},
		{time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC), "13 days ago"},
		{time.Date(2025, 12, 1, 12, 0, 0, 0, time.UTC), "on 1 Dec"},
	} {
		if got := AgoWords(tc.at, now, time.UTC); got != tc.want {
			t.Errorf("AgoWords(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}
