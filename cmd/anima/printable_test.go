package main

import "testing"

// TestPrintable: what a terminal acts on (ESC sequences, BEL, \r, C1, bidi overrides,
// bytes that are not UTF-8) comes out as visible escapes; printable Unicode stays whole.
func TestPrintable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "echo: first words", "echo: first words"},
		{"unicode kept", "Grüße, 世界 👨‍👩‍👧 — ok", "Grüße, 世界 👨‍👩‍👧 — ok"},
		{"title set and bell", "\x1b]0;pwned\a", `\x1b]0;pwned\a`},
		{"clear screen", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"carriage return overwrites", "Ann\r\x1b[2KMallory", `Ann\r\x1b[2KMallory`},
		{"newline and tab", "one\ntwo\tthree", `one\ntwo\tthree`},
		{"other C0 and DEL", "\x00\x07\x7f", `\x00\a\x7f`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"bidi override", "abc\u202edef", `abc\u202edef`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"not UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"backslash kept", `C:\dir`, `C:\dir`},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := printable(tc.in); got != tc.want {
				t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
