package innerlife

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
)

// Reflection is a theme a dream drew from journal entries older than FoldAfter (entry
// kind "reflection"): the folded entries leave prompts and /thoughts, the reflections
// carry what they showed. Like entries, reflections are kept per chat and user.
type Reflection struct {
	Chat int64     `json:"chat"`
	User int64     `json:"user"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// From and To are the times of the first and last entry folded; Entries how many.
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Entries int       `json:"entries"`

	seq uint64
}

func (r Reflection) subject() subject { return subject{r.Chat, r.User} }

// Folding limits: a dream folds entries at least FoldAfter old, at most foldChars of
// their text (the oldest first, at least one entry), into at most MaxReflections themes
// of at most MaxReflectionChars each. Prompts and /thoughts show the promptReflections
// latest.
const (
	FoldAfter          = 7 * 24 * time.Hour
	MaxReflections     = 3
	MaxReflectionChars = 200
	foldChars          = 2000
	promptReflections  = 3
)

// KindReflection is the kind a Reflection shows as.
const KindReflection = "reflection"

func reflectionKey(s subject, at time.Time, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(subjectKey('R', s), uint64(at.UnixNano()))
	return binary.BigEndian.AppendUint64(k, seq)
}

// seqOf is the sequence number at the end of an entry's or a reflection's key.
func seqOf(k []byte) uint64 {
	if len(k) < 33 {
		return 0
	}
	return binary.BigEndian.Uint64(k[len(k)-8:])
}

// toFold picks s's entries a dream at now may fold: unfolded, at least FoldAfter old,
// oldest first, at most foldChars of text (p.mu held).
func (p *Plugin) toFold(s subject, now time.Time) []Entry {
	var out []Entry
	chars := 0
	for _, e := range p.entries[s] { // oldest first
		if now.Sub(e.At) < FoldAfter {
			break
		}
		n := utf8.RuneCountInString(e.Text)
		if chars+n > foldChars && len(out) > 0 {
			break
		}
		chars += n
		out = append(out, e)
	}
	return out
}

// addReflection keeps r among its subject's latest reflections (p.mu held).
func (p *Plugin) addReflection(r Reflection) {
	s := r.subject()
	p.reflections[s] = keepLatest(p.reflections[s], r, func(r Reflection) time.Time { return r.At }, promptReflections)
}

// foldJournal folds journal entries into reflections: the entries are marked folded, the
// reflections written.
type foldJournal struct {
	Entries     []EntryRef
	Reflections []Reflection
}

// EntryRef names one journal entry of a subject: its time and sequence number.
type EntryRef struct {
	At  time.Time
	Seq uint64
}

// reflectTool is innerlife_reflect: a dream folds old journal entries into themes.
type reflectTool struct{ p *Plugin }

var reflectSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"themes":{"type":"array","items":{"type":"string"},"description":"one sentence each, at most 200 characters"}},` +
	`"required":["themes"],"additionalProperties":false}`)

func (reflectTool) Spec() brain.ToolSpec {
	return dreamSpec("innerlife_reflect", "Nightly reflection only, when journal entries are listed "+
		"\"to fold\": fold them into 1-3 themes on what they show over time. The themes replace them in your notes.", reflectSchema)
}

func (t reflectTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	var a struct {
		Themes []string `json:"themes"`
	}
	if err := call.Decode(&a); err != nil {
		return brain.ToolResult{}, err
	}
	var themes []string
	for _, th := range a.Themes {
		th = strings.Join(strings.Fields(th), " ")
		switch n := utf8.RuneCountInString(th); {
		case n == 0:
			continue
		case n > MaxReflectionChars:
			return brain.ToolResult{}, fmt.Errorf("a theme is %d characters; at most %d", n, MaxReflectionChars)
		}
		themes = append(themes, th)
	}
	switch {
	case len(themes) == 0:
		return brain.ToolResult{}, errors.New("themes is empty; give 1 to 3")
	case len(themes) > MaxReflections:
		return brain.ToolResult{}, fmt.Errorf("%d themes; at most %d", len(themes), MaxReflections)
	}
	for _, in := range call.Earlier {
		if c, ok := in.(brain.PluginChange); ok && c.Plugin == Name {
			if _, ok := c.Change.(foldJournal); ok {
				return brain.ToolResult{}, errors.New("you already folded the old entries in this reflection; not folded again")
			}
		}
	}
	s := subjectOf(call.Chat, call.User)
	t.p.mu.Lock()
	es := slices.Clone(t.p.folding[s])
	t.p.mu.Unlock()
	if len(es) == 0 {
		return brain.ToolResult{}, errors.New("nothing to fold: only your nightly reflection folds journal entries, " +
			"and only those listed there as older than a week")
	}
	refs := make([]EntryRef, len(es))
	for i, e := range es {
		refs[i] = EntryRef{At: e.At, Seq: e.seq}
	}
	rs := make([]Reflection, len(themes))
	for i, th := range themes {
		rs[i] = Reflection{Chat: s.chat, User: s.user, Text: th, At: call.Now, From: es[0].At, To: es[len(es)-1].At, Entries: len(es)}
	}
	return brain.ToolResult{Content: fmt.Sprintf("folded %d journal entries into %d themes", len(es), len(rs)),
		Intents: []brain.Intent{change(s.chat, s.user, foldJournal{Entries: refs, Reflections: rs})}}, nil
}

// reflectionLine renders r for a prompt or /thoughts.
func reflectionLine(r Reflection, loc *time.Location) string {
	return fmt.Sprintf("looking back on %s–%s (%d entries): %s", r.From.In(loc).Format("2 Jan"), r.To.In(loc).Format("2 Jan"),
		r.Entries, r.Text)
}
