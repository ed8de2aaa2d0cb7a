package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/hungarian"
	"github.com/kljensen/snowball/norwegian"
	"github.com/kljensen/snowball/russian"
	"github.com/kljensen/snowball/spanish"
	"github.com/kljensen/snowball/swedish"
)

func uniq(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

// tokenizer turns text into index terms for one language: lower-cased runs of Unicode
// letters and digits, stopwords and single ASCII letters (the "s" of "it's") dropped,
// each word stemmed (Snowball's stemmer for the language; Cyrillic words always by the
// Russian one, words of other scripts as they are), each at most 32 bytes. Its id names
// the terms it makes: an index built by another (an older anima's, another language's) is
// rebuilt before it is read (fold.go).
type tokenizer struct {
	id   string
	stem func(string) string
	self string // anima's own name, indexed with its turns (indexedText)
}

// Languages are the languages whose words the index stems, for Options.Language.
var Languages = []string{"english", "spanish", "french", "russian", "swedish", "norwegian", "hungarian", "none"}

// termsVersion changes whenever the terms a tokenizer makes change (an index built with
// other terms is rebuilt). 2: Snowball stemming and speakers' names (issue 34); the
// index before it stripped plurals by hand.
const termsVersion = "2"

// stemmers are Snowball's stemmers by language ("none" and unknown ones: none).
var stemmers = map[string]func(string, bool) string{
	"english": english.Stem, "spanish": spanish.Stem, "french": french.Stem, "russian": russian.Stem,
	"swedish": swedish.Stem, "norwegian": norwegian.Stem, "hungarian": hungarian.Stem,
}

// newTokenizer returns the tokenizer for language (one of Languages; "" is english) that
// indexes anima's turns under self. An unknown language stems nothing but Cyrillic words.
func newTokenizer(language, self string) tokenizer {
	if language == "" {
		language = "english"
	}
	stem := stemmers[language]
	self = brain.CleanName(self)
	return tokenizer{id: termsVersion + ":" + language + ":" + self, self: self, stem: func(w string) string {
		switch {
		case isCyrillic(w):
			return russian.Stem(w, true)
		case stem != nil && isLatin(w):
			return stem(w, true)
		}
		return w
	}}
}

// terms splits s into at most max index terms.
func (tk tokenizer) terms(s string, max int) []string {
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
		if t := tk.stem(w); t != "" {
			w = t
		}
		out = append(out, clip(w, maxTermBytes))
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isCyrillic reports whether w's first letter is Cyrillic.
func isCyrillic(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.Is(unicode.Cyrillic, r)
}

// isLatin reports whether every letter of w is Latin (digits pass).
func isLatin(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) {
			return false
		}
	}
	return true
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
