package innerlife

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins"
)

var _ plugins.Searchable = (*Plugin)(nil)

// Hit sources of the plugin's records in core_memory_search.
const (
	SourceConcern    = "concern"
	SourceJournal    = "journal"
	SourceReflection = "reflection"
)

// Search implements plugins.Searchable: user's concerns in chat (dormant ones too, which
// prompts no longer carry), the whole journal about them there (prompts carry only the
// latest entries; folded ones too) and the reflections drawn from it, scored by the share of the query's words each contains; ties go to the
// newest. Another member's records in a group are never read.
func (p *Plugin) Search(b plugins.Bucket, chat, user int64, query string, limit int) ([]brain.Hit, error) {
	s := subjectOf(chat, user)
	terms := words(query)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	var hits []brain.Hit
	score := func(text string) float64 {
		have := words(text)
		n := 0
		for _, t := range terms {
			if slices.Contains(have, t) {
				n++
			}
		}
		return float64(n) / float64(len(terms))
	}
	if err := scanJSON(b, subjectKey('C', s), "concern", func(_ []byte, c *Concern) {
		text := c.Summary + " " + strings.Join(c.Notes, " ")
		if s := score(text); s > 0 {
			hits = append(hits, brain.Hit{Source: SourceConcern, At: c.Touched, Score: s,
				Text: "you followed: " + c.Summary + lastNote(c.Notes)})
		}
	}); err != nil {
		return nil, err
	}
	if err := scanJSON(b, subjectKey('J', s), "journal entry", func(_ []byte, e *Entry) {
		if s := score(e.Text); s > 0 {
			hits = append(hits, brain.Hit{Source: SourceJournal, At: e.At, Score: s, Text: "you wrote (" + e.Kind + "): " + e.Text})
		}
	}); err != nil {
		return nil, err
	}
	if err := scanJSON(b, subjectKey('R', s), "reflection", func(_ []byte, r *Reflection) {
		if s := score(r.Text); s > 0 {
			hits = append(hits, brain.Hit{Source: SourceReflection, At: r.At, Score: s, Text: "you concluded, " + reflectionLine(*r, time.UTC)})
		}
	}); err != nil {
		return nil, err
	}
	slices.SortStableFunc(hits, func(a, b brain.Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return b.At.Compare(a.At)
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

func lastNote(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return " — latest: " + notes[len(notes)-1]
}

// words are the distinct lower-case words of s of at least 3 letters or digits.
func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(f)) >= 3 && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
