package cognition_test

import (
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain/cognition"
)

func TestSayable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "Hello, Ann!", "Hello, Ann!"},
		{"emphasis", "That's **really** *lovely* and __bold__ _too_.", "That's really lovely and bold too."},
		{"snake case stays", "my_file_name is fine", "my_file_name is fine"},
		{"a star in a sum", "2 * 3 is 6", "2 3 is 6"},
		{"heading and bullets", "# Plan\n- eggs\n* milk\n1. bread", "Plan\neggs\nmilk\nbread"},
		{"link said as its text", "See [the recipe](https://example.com/r) or https://x.io/y now.", "See the recipe or now."},
		{"code", "Run `go test` then:\n```go\nfmt.Println(1)\n```\ndone", "Run go test then:\ndone"},
		{"quote and rule", "> so true\n---\nyes", "so true\nyes"},
		{"blank lines collapse", "a\n\n\n\nb", "a\n\nb"},
		{"strike", "~~no~~ yes", "no yes"},
		{"only a link", "https://example.com", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := cognition.Sayable(tc.in)
			if got != tc.want {
				t.Fatalf("Sayable(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "*`#>[]|") {
				t.Fatalf("Sayable(%q) = %q keeps a mark a voice would read aloud", tc.in, got)
			}
		})
	}
}

func FuzzSayable(f *testing.F) {
	f.Add("**hi** [x](y) `z`\n# h\n- a")
	f.Fuzz(func(t *testing.T, s string) {
		got := cognition.Sayable(s)
		if strings.Contains(got, "**") || strings.Contains(got, "`") {
			t.Fatalf("Sayable(%q) = %q", s, got)
		}
	})
}
