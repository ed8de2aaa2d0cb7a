package innerlife_test

import (
	"strings"
	"testing"
	"time"
)

// TestStatusInWords (issue 17 item 5): /status names what anima follows and when it means
// to ask, in words relative to the user's zone; /status details has the date and time; a
// group member sees only their own.
func TestStatusInWords(t *testing.T) {
	t.Parallel()
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, auckland) // a Monday morning there
	p, b := newPlugin(t, now)
	checkIn := time.Date(2026, 3, 6, 19, 0, 0, 0, auckland)
	speak(t, p, b, p.Tools()[0], 7, 7, now, `{"action":"open","id":null,"summary":"your driving test on Friday","kind":"event",`+
		`"check_in_at":"`+checkIn.UTC().Format(time.RFC3339)+`","note":null}`)
	speak(t, p, b, p.Tools()[0], -5, 8, now, `{"action":"open","id":null,"summary":"member 8's move","kind":"event","check_in_at":null,"note":null}`)

	got := p.Status(7, 7, now, auckland)
	want := "I'm following: your driving test on Friday.\nI'd like to ask how it went — your driving test on Friday — on Friday evening, if the moment is right."
	if got != want {
		t.Errorf("/status:\n%s\nwant:\n%s", got, want)
	}
	if got := p.Status(7, 7, checkIn.Add(time.Hour), auckland); !strings.HasSuffix(got, "— when the moment is right.") {
		t.Errorf("/status once the check-in is due: %q", got)
	}
	details := p.StatusDetails(7, 7, now, auckland)
	if !strings.Contains(details, "Next check-in: your driving test on Friday, Fri 6 Mar 19:00") {
		t.Errorf("/status details lacks the check-in's local date and time:\n%s", details)
	}
	if got := p.Status(-5, 9, now, auckland); got != "" {
		t.Errorf("member 9's /status in the group shows %q; member 8's concern is not theirs", got)
	}
	if got := p.Status(-5, 8, now, auckland); !strings.Contains(got, "member 8's move") {
		t.Errorf("member 8's /status in the group lacks their own concern: %q", got)
	}
}
