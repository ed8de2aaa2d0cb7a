package brain

import (
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "search_web: Find pages.", "search_web: Find pages."},
		{"unicode and quotes stay", `Zoë "the" \ 🌱 ünïcode`, `Zoë "the" \ 🌱 ünïcode`},
		{"window title", "a\x1b]0;PWNED\x07b", `a\x1b]0;PWNED\ab`},
		{"clear screen and return", "x\x1b[2J\rname", `x\x1b[2J\rname`},
		{"erase line", "Mallory\r\x1b[2KAlice", `Mallory\r\x1b[2KAlice`},
		{"tab newline NUL backspace DEL", "a\tb\nc\x00d\be\x7f", `a\tb\nc\x00d\be\x7f`},
		{"C1 CSI", "a\u009b31mb\u0085", `a\u009b31mb\u0085`},
		{"bidi override and isolate", "abc\u202egnp.exe\u2066x\u2069", `abc\u202egnp.exe\u2066x\u2069`},
		{"invalid UTF-8 byte", "a\xff\x9bb", `a\xff\x9bb`},
		{"literal replacement character stays", "a\uFFFDb", "a\uFFFDb"},
		{"line separator", "a\u2028b\u2029", `a\u2028b\u2029`},
		{"emoji joiner kept", "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Printable(tc.in); got != tc.want {
				t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzPrintable: whatever comes in, what comes out is UTF-8 and holds nothing a terminal
// acts on.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"Bob", "\rA\x1b[2K", "\x9b\xff", "a\u202eb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Printable(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Printable(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if unprintable(r) {
				t.Fatalf("Printable(%q) = %q keeps %U", s, got, r)
			}
		}
	})
}
