package brain

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Trigrams returns the set of lower-cased word trigrams of text (for texts shorter than
// three words, the words themselves form one gram).
func Trigrams(text string) map[string]struct{} {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	set := map[string]struct{}{}
	if len(words) < 3 {
		if len(words) > 0 {
			set[strings.Join(words, " ")] = struct{}{}
		}
		return set
	}
	for i := 0; i+3 <= len(words); i++ {
		set[words[i]+" "+words[i+1]+" "+words[i+2]] = struct{}{}
	}
	return set
}

// Jaccard is |a∩b| / |a∪b| (0 when both are empty).
func Jaccard(a, b map[string]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if _, ok := b[k]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// TruncateRunes cuts s to at most n runes.
func TruncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Duration renders d compactly for people: "25m", "4h", "4h30m", "2d3h" ("0m" under a
// minute).
func Duration(d time.Duration) string {
	d = d.Round(time.Minute)
	days, d := d/(24*time.Hour), d%(24*time.Hour)
	h, m := d/time.Hour, (d%time.Hour)/time.Minute
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 && days == 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if b.Len() == 0 {
		return "0m"
	}
	return b.String()
}
