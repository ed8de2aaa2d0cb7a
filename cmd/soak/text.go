package main

import (
	"math/rand/v2"
	"strings"
)

// talker writes messages with a natural, long-tailed vocabulary: content words drawn
// from a Zipf distribution over a generated vocabulary, mixed with common stopwords.
type talker struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

var syllables = strings.Fields(`ka lo mi ren sa tu vel or an is pe ra do ne li mo ta gu fi el
	ar on un ex bri cla dro fen gra hol jun kes lum mar nor pol qui ros sil tor ul vin wes yar zo`)

var glue = strings.Fields(`i the and to a of it in that was is for you on with my but so we
	just have be this at me not what about are do all when like really`)

func newTalker(seed uint64, vocab int) *talker {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	seen := map[string]bool{}
	words := make([]string, 0, vocab)
	for len(words) < vocab {
		n := 1 + r.IntN(4)
		var b strings.Builder
		for range n {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := b.String(); !seen[w] && len(w) > 2 {
			seen[w] = true
			words = append(words, w)
		}
	}
	return &talker{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(vocab-1)), vocab: words}
}

// say returns a message of about chars characters (between 0.7 and 1.3 times).
func (t *talker) say(chars int) string {
	want := chars*7/10 + t.r.IntN(chars*6/10+1)
	var b strings.Builder
	for b.Len() < want {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if t.r.IntN(10) < 4 {
			b.WriteString(glue[t.r.IntN(len(glue))])
		} else {
			b.WriteString(t.vocab[t.zipf.Uint64()])
		}
		if t.r.IntN(12) == 0 {
			b.WriteByte('.')
		}
	}
	return b.String()
}
