package brain_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/anima-bot/anima/brain"
)

func TestAddStateLine(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	line := func(text string, ago time.Duration) brain.StateLine {
		return brain.StateLine{Text: text, At: t0.Add(-ago)}
	}
	five := []brain.StateLine{line("a", 5*day), line("b", 4*day), line("c", 3*day), line("d", 2*day), line("e", day)}
	tests := []struct {
		name    string
		lines   []brain.StateLine
		text    string
		replace bool
		want    []brain.StateLine
	}{
		{"first line", nil, "exhausted, big deadline Friday", false,
			[]brain.StateLine{line("exhausted, big deadline Friday", 0)}},
		{"added after the others", five[3:], "f", false, []brain.StateLine{five[3], five[4], line("f", 0)}},
		{"the oldest goes past five", five, "f", false, []brain.StateLine{five[1], five[2], five[3], five[4], line("f", 0)}},
		{"replace drops the earlier lines", five, "rested again", true, []brain.StateLine{line("rested again", 0)}},
		{"faded lines are dropped on write", []brain.StateLine{line("old", 15*day), line("fresh", 14*day), line("newer", day)}, "f", false,
			[]brain.StateLine{line("fresh", 14*day), line("newer", day), line("f", 0)}},
		{"whitespace folds", nil, "  tired\n\tbut  ok ", false, []brain.StateLine{line("tired but ok", 0)}},
		{"control characters fold", nil, "tired\x00\x1b[2Jok", false, []brain.StateLine{line("tired [2Jok", 0)}},
		{"empty adds nothing", five[:2], " \n ", false, five[:2]},
		{"empty replace clears", five, "", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := append([]brain.StateLine(nil), tc.lines...)
			got := brain.AddStateLine(tc.lines, tc.text, t0, tc.replace)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AddStateLine (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.lines); diff != "" {
				t.Errorf("AddStateLine modified its input:\n%s", diff)
			}
		})
	}
}

func TestCleanStateLineCutsWithAMark(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ünd ", 100)
	got := brain.CleanStateLine(long)
	if n := utf8.RuneCountInString(got); n != brain.StateLineRunes {
		t.Errorf("cut line has %d runes, want %d", n, brain.StateLineRunes)
	}
	if !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("cut line %q does not end in the cut mark", got)
	}
	exact := strings.Repeat("x", brain.StateLineRunes)
	if got := brain.CleanStateLine(exact); got != exact {
		t.Errorf("a line of exactly %d runes was cut: %q", brain.StateLineRunes, got)
	}
}

func TestFreshLines(t *testing.T) {
	t.Parallel()
	lines := []brain.StateLine{
		{Text: "faded", At: t0.Add(-brain.StateFades - time.Second)},
		{Text: "edge", At: t0.Add(-brain.StateFades)},
		{Text: "new", At: t0.Add(-time.Hour)},
	}
	got := brain.FreshLines(lines, t0)
	if diff := cmp.Diff(lines[1:], got); diff != "" {
		t.Errorf("FreshLines (-want +got):\n%s", diff)
	}
	if got := brain.FreshLines(lines[1:], t0); &got[0] != &lines[1] {
		t.Error("FreshLines copied lines that were all fresh")
	}
}
