package setup

import (
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Bob", "Bob"},
		{"unicode kept", "Zoë 🌱 Ωμέγα 日本", "Zoë 🌱 Ωμέγα 日本"},
		{"backslash kept", `a\b`, `a\b`},
		{"carriage return and erase line", "\rAlice\x1b[2K", `\rAlice\x1b[2K`},
		{"title OSC", "\x1b]0;pwned\x07x", `\x1b]0;pwned\x07x`},
		{"tab newline NUL DEL", "a\tb\nc\x00d\x7f", `a\tb\nc\x00d\x7f`},
		{"C1 CSI as a rune", "a\u009b2Jb", `a\u009b2Jb`},
		{"C1 NEL", "a\u0085b", `a\u0085b`},
		{"byte not UTF-8", "a\x9b2J\xff", `a\x9b2J\xff`},
		{"right-to-left override", "Eve\u202e2424", `Eve\u202e2424`},
		{"isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"replacement character", "a\ufffd", `a\ufffd`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := printable(tc.in)
			if got != tc.want {
				t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
			for _, r := range got {
				if r != utf8.RuneError && escaped(r) {
					t.Errorf("printable(%q) keeps %U", tc.in, r)
				}
			}
		})
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"Bob", "\rA\x1b[2K", "\x9b\xff", "a\u202eb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := printable(s)
		if !utf8.ValidString(got) {
			t.Fatalf("printable(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if escaped(r) {
				t.Fatalf("printable(%q) = %q keeps %U", s, got, r)
			}
		}
	})
}
