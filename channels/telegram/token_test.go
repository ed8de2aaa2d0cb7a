package telegram

import (
	"errors"
	"strings"
	"testing"
)

func TestValidToken(t *testing.T) {
	secret := "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw" // 34 characters, as @BotFather's
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"botfather's shape", "110201543:" + secret, nil},
		{"underscore and dash", "1:" + strings.Repeat("a_-Z9", 6), nil},
		{"trailing newline", "110201543:" + secret + "\n", ErrTokenWhitespace},
		{"trailing CRLF", "110201543:" + secret + "\r\n", ErrTokenWhitespace},
		{"leading space", " 110201543:" + secret, ErrTokenWhitespace},
		{"inner tab", "110201543:" + secret[:10] + "\t" + secret[10:], ErrTokenWhitespace},
		{"non-breaking space", "110201543:" + secret + "\u00a0", ErrTokenWhitespace},
		{"empty", "", ErrTokenShape},
		{"no colon", "110201543" + secret, ErrTokenShape},
		{"empty id", ":" + secret, ErrTokenShape},
		{"letters in id", "11a201543:" + secret, ErrTokenShape},
		{"negative id", "-110201543:" + secret, ErrTokenShape},
		{"secret too short", "110201543:" + secret[:29], ErrTokenShape},
		{"secret of 30", "110201543:" + secret[:30], nil},
		{"second colon", "110201543:" + secret + ":x", ErrTokenShape},
		{"slash in secret", "110201543:" + secret + "/getMe", ErrTokenShape},
		{"percent-escaped", "110201543%3A" + secret, ErrTokenShape},
		{"non-ASCII letter", "110201543:" + secret + "é", ErrTokenShape},
		{"test fake's default", "123456:TEST-fake-token", ErrTokenShape},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidToken(tc.token)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("ValidToken = %v, want %v", err, tc.want)
			}
			if err == nil {
				return
			}
			msg := err.Error()
			for _, part := range []string{secret[:8], "TEST-fake", "110201543", "123456"} {
				if strings.Contains(msg, part) {
					t.Errorf("error %q echoes the token (%q)", msg, part)
				}
			}
		})
	}
}

func TestValidTokenWhitespaceSaysSo(t *testing.T) {
	err := ValidToken("110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw\n")
	if err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Fatalf("ValidToken = %v, want an error saying the token contains whitespace", err)
	}
}
