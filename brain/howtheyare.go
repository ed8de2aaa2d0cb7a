package brain

import (
	"strings"
	"time"
	"unicode"
)

// How they are: a short, dated note per person of their state and what is on their plate
// ("exhausted, big deadline Friday"), kept per chat and user (in a group, per member),
// written by the model through a tool (brain/memory's core_how_they_are) and shown to
// the runs that talk with them. It is small and it fades: at most StateLines lines of at
// most StateLineRunes runes, each dated, none older than StateFades.

// Bounds of a note of how they are.
const (
	StateLines     = 5
	StateLineRunes = 200
	StateFades     = 14 * 24 * time.Hour
)

// stateCut marks a line cut to StateLineRunes.
const stateCut = "…"

// StateLine is one dated line of how a person is.
type StateLine struct {
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// StateNote is the note of how one person is, as a run is shown it: whose it is (User, and
// Name in a group: the member's first name from the turns) and its fresh lines, oldest
// first.
type StateNote struct {
	User  int64
	Name  string
	Lines []StateLine
}

// NoteState adds a line to the note of how User is in Chat (0: the turn's chat and user);
// Replace drops the note's earlier lines first (they no longer hold). Applied in the
// turn (HomeOf) by AddStateLine's rule.
type NoteState struct {
	Chat    int64
	User    int64
	Text    string
	Replace bool
}

// IntentName implements Intent.
func (NoteState) IntentName() string { return "note_state" }

// FreshLines returns the lines of lines not older than StateFades at now (a line dated
// after now counts as fresh), in their order. It returns lines itself when all are fresh.
func FreshLines(lines []StateLine, now time.Time) []StateLine {
	from := now.Add(-StateFades)
	for i, l := range lines {
		if l.At.Before(from) {
			out := append([]StateLine(nil), lines[:i]...)
			for _, l := range lines[i+1:] {
				if !l.At.Before(from) {
					out = append(out, l)
				}
			}
			return out
		}
	}
	return lines
}

// CleanStateLine makes text one line of a note: control characters and whitespace runs
// (newlines too) folded to single spaces, cut to StateLineRunes runes with a "…" at the
// cut. "" when nothing is left.
func CleanStateLine(text string) string {
	text = strings.Join(strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if cut := TruncateRunes(text, StateLineRunes); cut != text {
		return strings.TrimRight(TruncateRunes(text, StateLineRunes-1), " ") + stateCut
	}
	return text
}

// AddStateLine is the rule of a write: the lines older than StateFades at at are dropped
// (all of them when replace), text is added as a line dated at (cleaned by
// CleanStateLine), and while there are more than StateLines lines the oldest goes. An
// empty text adds nothing. lines is not modified.
func AddStateLine(lines []StateLine, text string, at time.Time, replace bool) []StateLine {
	var out []StateLine
	if !replace {
		out = append(out, FreshLines(lines, at)...)
	}
	if text = CleanStateLine(text); text != "" {
		out = append(out, StateLine{Text: text, At: at})
	}
	if n := len(out) - StateLines; n > 0 {
		out = out[n:]
	}
	return out
}
