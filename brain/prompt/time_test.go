package prompt

import (
	"testing"
	"time"

	"github.com/anima-bot/anima/brain"
)

func TestRelTime(t *testing.T) {
	t.Parallel()
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	// Wednesday 10 Dec 2025, 09:30 in Auckland (20:30 UTC the day before).
	now := time.Date(2025, 12, 10, 9, 30, 0, 0, auckland)
	tests := []struct {
		at   time.Time
		want string
	}{
		{now.Add(-30 * time.Second), "just now"},
		{now.Add(time.Minute), "just now"}, // a clock a little ahead
		{now.Add(-12 * time.Minute), "12 min ago"},
		{now.Add(-59 * time.Minute), "59 min ago"},
		{time.Date(2025, 12, 10, 0, 40, 0, 0, auckland), "today 00:40"},
		{time.Date(2025, 12, 9, 21, 14, 0, 0, auckland), "yesterday 21:14"},
		{time.Date(2025, 12, 9, 21, 14, 0, 0, auckland).UTC(), "yesterday 21:14"}, // stored in UTC, read in their zone
		{time.Date(2025, 12, 7, 23, 59, 0, 0, auckland), "3 days ago"},
		{time.Date(2025, 12, 3, 12, 0, 0, 0, auckland), "3 Dec"},
		{time.Date(2024, 11, 30, 12, 0, 0, 0, auckland), "30 Nov 2024"},
	}
	for _, tc := range tests {
		if got := relTime(tc.at, now, auckland); got != tc.want {
			t.Errorf("relTime(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
	if got := turnTag(time.Time{}, now, auckland); got != "" {
		t.Errorf("turnTag(zero) = %q, want none", got)
	}
}

// TestTurnMarkSaysWhoWroteFirst: a message anima sent of its own accord is marked so; an
// answer, a reminder and the person's own lines carry the time alone.
func TestTurnMarkSaysWhoWroteFirst(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	at := time.Date(2026, 3, 3, 19, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		turn brain.Turn
		want string
	}{
		{brain.Turn{Role: "assistant", Kind: brain.KindProactive, At: at}, "[yesterday 19:10, you wrote first] "},
		{brain.Turn{Role: "assistant", Kind: brain.KindFollowup, At: at}, "[yesterday 19:10, you wrote first] "},
		{brain.Turn{Role: "assistant", Kind: brain.KindProactive}, "[you wrote first] "},
		{brain.Turn{Role: "assistant", Kind: brain.KindReply, At: at}, "[yesterday 19:10] "},
		{brain.Turn{Role: "assistant", Kind: brain.KindReminder, At: at}, "[yesterday 19:10] "},
		{brain.Turn{Role: "user", At: at}, "[yesterday 19:10] "},
	} {
		if got := turnMark(tc.turn, now, time.UTC); got != tc.want {
			t.Errorf("turnMark(%+v) = %q, want %q", tc.turn, got, tc.want)
		}
		if got := StripTurnTag(tc.want + "text"); got != "text" {
			t.Errorf("StripTurnTag(%q) = %q: the mark is not taken off an echo", tc.want+"text", got)
		}
	}
}

func TestStripTurnTag(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"[yesterday 21:14] Morning!", "Morning!"},
		{"[just now] Hi", "Hi"},
		{"[3 days ago] ok", "ok"},
		{"[12 Mar] ok", "ok"},
		{"[yesterday 19:10, you wrote first] Hey again", "Hey again"},
		{"[you wrote first] Hey", "Hey"},
		{"[link](https://example.com) here", "[link](https://example.com) here"},
		{"[today is great] yes", "[today is great] yes"},
		{"Plain", "Plain"},
	}
	for _, tc := range tests {
		if got := StripTurnTag(tc.in); got != tc.want {
			t.Errorf("StripTurnTag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
