package innerlife

import (
	"slices"
	"strings"
	"time"
)

// Salience is how present a concern is, by the time since it was last touched.
type Salience int

// Saliences, most present first.
const (
	Active     Salience = iota // touched within 7 days
	Monitoring                 // 7 days untouched
	Background                 // 30 days untouched
	Dormant                    // 90 days untouched: no longer in prompts
	salienceCount
)

// Decay thresholds: a concern untouched this long has decayed to the next salience.
const (
	ToMonitoring = 7 * 24 * time.Hour
	ToBackground = 30 * 24 * time.Hour
	ToDormant    = 90 * 24 * time.Hour
)

var salienceNames = [salienceCount]string{"active", "monitoring", "background", "dormant"}

func (s Salience) String() string { return salienceNames[s] }

// SalienceAt is the salience of a concern last touched at touched, at now.
func SalienceAt(touched, now time.Time) Salience {
	switch age := now.Sub(touched); {
	case age >= ToDormant:
		return Dormant
	case age >= ToBackground:
		return Background
	case age >= ToMonitoring:
		return Monitoring
	}
	return Active
}

// Kinds of concern.
var concernKinds = []string{"project", "interest", "event", "wellbeing", "conversation"}

// Concern caps: how many concerns one user may have open (not dormant) in one chat, and
// how many one run may open.
const (
	MaxOpenConcerns   = 20
	MaxOpenedPerRun   = 3
	maxDueCheckInsRun = 3 // due check-ins one prompt carries (the rest stay due)
)

// Concern is a topic the user cares about that anima follows.
type Concern struct {
	ID   string `json:"id"`
	Chat int64  `json:"chat"`
	// User is whose concern it is (in a group, the member who spoke of it).
	User    int64     `json:"user"`
	Summary string    `json:"summary"`
	Kind    string    `json:"kind"`
	Created time.Time `json:"created"`
	Touched time.Time `json:"touched"`
	// Notes are the latest news (at most maxNotes, oldest first).
	Notes []string `json:"notes,omitempty"`
	// CheckInAt is when anima means to ask how it went (zero: no check-in); CheckInDone
	// once it was asked (or the user brought it up first).
	CheckInAt   time.Time `json:"check_in_at,omitzero"`
	CheckInDone bool      `json:"check_in_done,omitempty"`
	// On is the day it is about (YYYY-MM-DD in the person's zone when it was opened; ""
	// when none was said), and Asked when anima asked how it went (zero: not yet, or
	// before anima recorded it).
	On    string    `json:"on,omitempty"`
	Asked time.Time `json:"asked,omitzero"`
}

const maxNotes = 3

func (c *Concern) subject() subject { return subject{c.Chat, c.User} }

// dueCheckIn reports whether c's check-in is due and not yet asked at now.
func (c *Concern) dueCheckIn(now time.Time) bool {
	return !c.CheckInAt.IsZero() && !c.CheckInDone && !now.Before(c.CheckInAt)
}

// promptConcerns picks the concerns a prompt carries: at most 8 non-dormant ones, Active
// first (then Monitoring, Background), newest first within each, cut to about maxWords,
// each in words (Concern.words); skip are concerns the prompt shows already (a due
// check-in): one concern is said once. It returns the lines and marks in shown the
// concerns they say.
func promptConcerns(cs []*Concern, skip, shown map[string]bool, now time.Time, loc *time.Location, maxWords int) []string {
	picked := make([]*Concern, 0, len(cs))
	for _, c := range cs {
		if SalienceAt(c.Touched, now) != Dormant && !skip[c.ID] {
			picked = append(picked, c)
		}
	}
	slices.SortStableFunc(picked, func(a, b *Concern) int {
		if sa, sb := SalienceAt(a.Touched, now), SalienceAt(b.Touched, now); sa != sb {
			return int(sa) - int(sb)
		}
		return b.Created.Compare(a.Created)
	})
	if len(picked) > 8 {
		picked = picked[:8]
	}
	var lines []string
	words := 0
	for _, c := range picked {
		line := "concern: " + c.words(now, loc)
		n := len(strings.Fields(line))
		if words+n > maxWords && len(lines) > 0 {
			break
		}
		words += n
		lines = append(lines, line)
		shown[c.ID] = true
	}
	return lines
}
