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
//
// This file holds their vocabulary: Self and Share, the Relationship methods that read and
// replace them, and the intents that change them.

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

// Self is anima's own about one relationship: its note (what it has been thinking about,
// opinions it formed, running jokes with this person; at most SelfNoteMax characters) and
// the thoughts it might share (at most MaxShares). It is never changed in place: the
// Relationship methods below replace it (wake snapshots share it).
type Self struct {
	Note   string  `json:"note,omitempty"`
	Shares []Share `json:"shares,omitempty"`
}

// Share is a thought anima might bring up with the person when it writes first: tied to
// something they said or to one of its interests, dropped at Expires.
type Share struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	TiedTo  string    `json:"tied_to,omitempty"`
	At      time.Time `json:"at"`
	Expires time.Time `json:"expires"`
	// Raised is when the share last raised thought pressure (zero: never).
	Raised time.Time `json:"raised,omitzero"`
	// Matters is how much it matters to the person, 1 (a passing thought) to 3 (tied to
	// what is on their plate now); 0 in shares kept before it was asked.
	Matters int `json:"matters,omitempty"`
}

// ShareMattersMax is the most a share can matter (Share.Matters).
const ShareMattersMax = 3

// Live reports whether s has not expired at now.
func (s Share) Live(now time.Time) bool { return now.Before(s.Expires) }

// Note is anima's own note about r ("" without one). A group has none: the dream that
// writes it never runs for a group, so a note stored for one (by a chat turn before issue
// 33) would be some member's words passed off as anima's own, and is never read.
func (r *Relationship) Note() string {
	if r.Self == nil || r.Group {
		return ""
	}
	return r.Self.Note
}

// Shares are all the thoughts r keeps to share, expired ones included; do not change them.
func (r *Relationship) Shares() []Share {
	if r.Self == nil || r.Group { // a group keeps none (see Note)
		return nil
	}
	return r.Self.Shares
}

// Shareable returns the thoughts r might share at now (the live ones, oldest first), for
// a caller choosing what a first message brings up. Do not change the slice.
func (r *Relationship) Shareable(now time.Time) []Share {
	all := r.Shares()
	for _, s := range all {
		if !s.Live(now) {
			return slices.DeleteFunc(slices.Clone(all), func(s Share) bool { return !s.Live(now) })
		}
	}
	return all
}

// setSelf replaces r's Self with note and shares (nil when both are empty, and always for
// a group, which keeps no self note and no shares).
func (r *Relationship) setSelf(note string, shares []Share) {
	if r.Group {
		r.Self = nil
		return
	}
	if len(shares) == 0 {
		shares = nil
	}
	if note == "" && shares == nil {
		r.Self = nil
		return
	}
	r.Self = &Self{Note: note, Shares: shares}
}

// SetNote replaces anima's own note about r (made fit by CleanSelfNote; "" clears it).
func (r *Relationship) SetNote(note string) { r.setSelf(CleanSelfNote(note), r.Shares()) }

// AddShare keeps s among r's shares: expired ones are dropped, and beyond MaxShares the
// oldest goes.
func (r *Relationship) AddShare(s Share, now time.Time) {
	kept := make([]Share, 0, MaxShares+1)
	for _, o := range r.Shares() {
		if o.Live(now) && o.ID != s.ID {
			kept = append(kept, o)
		}
	}
	kept = append(kept, s)
	if n := len(kept) - MaxShares; n > 0 {
		kept = kept[n:]
	}
	r.setSelf(r.Note(), kept)
}

// UseShare drops the share id (it went into a message); false when r has none such.
func (r *Relationship) UseShare(id string) bool {
	all := r.Shares()
	i := slices.IndexFunc(all, func(s Share) bool { return s.ID == id })
	if i < 0 {
		return false
	}
	r.setSelf(r.Note(), slices.Delete(slices.Clone(all), i, i+1))
	return true
}

// MarkRaised records that share id raised thought pressure at now.
func (r *Relationship) MarkRaised(id string, now time.Time) {
	all := r.Shares()
	i := slices.IndexFunc(all, func(s Share) bool { return s.ID == id })
	if i < 0 {
		return
	}
	shares := slices.Clone(all)
	shares[i].Raised = now
	r.setSelf(r.Note(), shares)
}

// CleanSelfNote is text made fit for a self note: spaces folded within lines, blank lines
// dropped, at most SelfNoteMax characters (cut at a line or word when one is near).
func CleanSelfNote(text string) string {
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
