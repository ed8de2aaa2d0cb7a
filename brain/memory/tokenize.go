package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

func uniq(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// tokenize splits s into index terms: lower-cased runs of Unicode letters and digits,
// stopwords and single ASCII letters (the "s" of "it's") dropped, a light plural stemming, each at most 32 bytes; at most max terms.
func tokenize(s string, max int) []string {
	var out []string
	for len(s) > 0 && len(out) < max {
		i := strings.IndexFunc(s, isWordRune)
		if i < 0 {
			break
		}
		s = s[i:]
		j := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) })
		if j < 0 {
			j = len(s)
		}
		w := strings.ToLower(s[:j])
		s = s[j:]
		if _, stop := stopwords[w]; stop || len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' {
			continue
		}
		out = append(out, clip(stem(w), maxTermBytes))
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// stem strips English plural endings: "bicycles" → "bicycle", "stories" → "story".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// clip cuts w to at most n bytes on a rune boundary.
func clip(w string, n int) string {
	if len(w) <= n {
		return w
	}
	for n > 0 && !utf8.RuneStart(w[n]) {
		n--
	}
	return w[:n]
}

var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at
		be because been before being below between both but by can could did do does doing down
		during each few for from further had has have having he her here hers herself him himself
		his how i if in into is it its itself just me more most my myself no nor not now of off on
		once only or other our ours ourselves out over own same she should so some such than that
		the their theirs them themselves then there these they this those through to too under
		until up very was we were what when where which while who whom why will with would you
		your yours yourself yourselves im dont ok okay yes yeah oh`) {
		m[w] = struct{}{}
	}
	return m
}()
