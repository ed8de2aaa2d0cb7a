package brain_test

import (
	"math"
	"slices"
	"testing"

	"github.com/anima-bot/anima/brain"
)

func keys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestTrigrams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", []string{}},
		{"only punctuation", " ,.!? — ", []string{}},
		{"one word", "Hello!", []string{"hello"}},
		{"two words form one gram", "Hello, World", []string{"hello world"}},
		{"three words", "how are you", []string{"how are you"}},
		{"sliding window", "The cat sat on the mat", []string{"cat sat on", "on the mat", "sat on the", "the cat sat"}},
		{"case and punctuation ignored", "HOW, are... YOU?!", []string{"how are you"}},
		{"repeated grams counted once", "a b c a b c", []string{"a b c", "b c a", "c a b"}},
		{"numbers are words", "call me at 9 tomorrow", []string{"at 9 tomorrow", "call me at", "me at 9"}},
		{"apostrophe splits", "don't go", []string{"don t go"}},
		{"non-latin letters", "Привет, как дела сегодня", []string{"как дела сегодня", "привет как дела"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := keys(brain.Trigrams(tc.text))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Trigrams(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestJaccard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		want float64
	}{
		{"both empty", "", "", 0},
		{"one empty", "", "how are you", 0},
		{"identical", "how are you today", "How are you today?", 1},
		{"disjoint", "how are you", "see you later", 0},
		// {abc,bcd,cde} vs {abc,bcd,cdx}: 2 shared of 4.
		{"exactly one half", "a b c d e", "a b c d x", 0.5},
		// {abc,bcd} vs {abc,bce}: 1 shared of 3.
		{"one third", "a b c d", "a b c e", 1.0 / 3},
		// {abc,bcd,cde,def} vs {abc}: 1 of 4.
		{"subset", "a b c d e f", "a b c", 0.25},
		{"short texts compare whole", "hi there", "Hi, there!", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := brain.Trigrams(tc.a), brain.Trigrams(tc.b)
			got := brain.Jaccard(a, b)
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Jaccard(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if back := brain.Jaccard(b, a); back != got {
				t.Errorf("Jaccard is not symmetric: %v vs %v", got, back)
			}
		})
	}
}
