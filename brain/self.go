package brain

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Something of anima's own, per relationship: a small self note (what it has been
// thinking about, opinions it formed, running jokes with this person) and a few thoughts
// it might share, both rewritten in the nightly dream. They live on the Relationship, so
// every run's snapshot (Wake.Rel) carries them and /forget erases them with it.

const (
	// SelfNoteMax is the most characters (runes) a self note keeps.
	SelfNoteMax = 1000
	// MaxShares is how many thoughts to share a relationship keeps (the newest).
	MaxShares = 3
	// ShareTextMax is the most characters (runes) of a share's text and of its TiedTo.
	ShareTextMax = 300
	// ShareMaxDays is the longest a share may wait before it expires.
	ShareMaxDays = 7
)

// Share is a thought anima might bring up with the person when it writes first: tied to
// something they said or to one of its interests, dropped at Expires. A share is never
// changed in place: Relationship.Shares is replaced as a whole (wake snapshots share its
// backing array).
type Share struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	TiedTo  string    `json:"tied_to,omitempty"`
	At      time.Time `json:"at"`
	Expires time.Time `json:"expires"`
	// Raised is when the share last raised thought pressure (zero: never).
	Raised time.Time `json:"raised,omitzero"`
}

// Live reports whether s has not expired at now.
func (s Share) Live(now time.Time) bool { return now.Before(s.Expires) }

// Shareable returns the thoughts r might share at now (the live ones, oldest first), for
// a caller choosing what a first message brings up. The slice is r's own: do not change
// it.
func (r *Relationship) Shareable(now time.Time) []Share {
	for _, s := range r.Shares {
		if !s.Live(now) {
			return slices.DeleteFunc(slices.Clone(r.Shares), func(s Share) bool { return !s.Live(now) })
		}
	}
	return r.Shares
}

// AddShare keeps s among r's shares: expired ones are dropped, and beyond MaxShares the
// oldest goes.
func (r *Relationship) AddShare(s Share, now time.Time) {
	kept := make([]Share, 0, MaxShares+1)
	for _, o := range r.Shares {
		if o.Live(now) && o.ID != s.ID {
			kept = append(kept, o)
		}
	}
	kept = append(kept, s)
	if n := len(kept) - MaxShares; n > 0 {
		kept = kept[n:]
	}
	r.Shares = kept
}

// UseShare drops the share id (it went into a message); false when r has none such.
func (r *Relationship) UseShare(id string) bool {
	i := slices.IndexFunc(r.Shares, func(s Share) bool { return s.ID == id })
	if i < 0 {
		return false
	}
	r.Shares = slices.Delete(slices.Clone(r.Shares), i, i+1)
	if len(r.Shares) == 0 {
		r.Shares = nil
	}
	return true
}

// MarkRaised records that share id raised thought pressure at now (copy on write).
func (r *Relationship) MarkRaised(id string, now time.Time) {
	i := slices.IndexFunc(r.Shares, func(s Share) bool { return s.ID == id })
	if i < 0 {
		return
	}
	shares := slices.Clone(r.Shares)
	shares[i].Raised = now
	r.Shares = shares
}

// SelfNote is text made fit for a self note: spaces folded within lines, blank lines
// dropped, at most SelfNoteMax characters (cut at a line or word when one is near).
func SelfNote(text string) string {
	var lines []string
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	note := strings.Join(lines, "\n")
	if utf8.RuneCountInString(note) <= SelfNoteMax {
		return note
	}
	return cutRunes(note, SelfNoteMax)
}

// ShareText is one line of at most ShareTextMax characters.
func ShareText(text string) string {
	return cutRunes(strings.Join(strings.Fields(text), " "), ShareTextMax)
}

// cutRunes cuts s to at most n runes, at the last line break or space of the kept part's
// last fifth when there is one.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := s
	for i := range s {
		if n == 0 {
			cut = s[:i]
			break
		}
		n--
	}
	if i := strings.LastIndexAny(cut, "\n "); i > len(cut)*4/5 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut)
}

// SetSelfNote replaces the self note of a chat's relationship ("" clears it).
type SetSelfNote struct {
	Chat int64
	Note string
}

// ShareLater keeps a thought to share with a chat's person (see Relationship.AddShare).
type ShareLater struct {
	Chat  int64
	Share Share
}

// ShareUsed consumes a share that went into a message anima sent.
type ShareUsed struct {
	Chat int64
	ID   string
}

// IntentName implements Intent.
func (SetSelfNote) IntentName() string { return "set_self_note" }

// IntentName implements Intent.
func (ShareLater) IntentName() string { return "share_later" }

// IntentName implements Intent.
func (ShareUsed) IntentName() string { return "share_used" }
