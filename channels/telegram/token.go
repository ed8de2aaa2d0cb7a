package telegram

import (
	"errors"
	"strings"
	"unicode"
)

// Errors of ValidToken. Their texts never include the token.
var (
	// ErrTokenWhitespace: the token contains whitespace, typically the trailing newline
	// of a secret file or a Kubernetes secret.
	ErrTokenWhitespace = errors.New("the token contains whitespace (a trailing newline from a secret file?); remove it")
	// ErrTokenShape: the token is not <digits>:<at least 30 of A-Z a-z 0-9 _ ->, the shape
	// @BotFather gives.
	ErrTokenShape = errors.New("the token does not have the shape @BotFather gives: " +
		"digits, a colon, then at least 30 of A-Z a-z 0-9 _ -")
)

// minTokenSecret is the shortest secret half (after the colon) ValidToken accepts;
// @BotFather's are 35 characters.
const minTokenSecret = 30

// ValidToken reports whether s has the shape of a Telegram bot token: digits, a colon,
// then at least 30 URL-safe characters (A-Z a-z 0-9 _ -). It returns ErrTokenWhitespace
// when s contains whitespace anywhere, ErrTokenShape for any other deviation, and never
// echoes s. It makes no network call: a token of the right shape may still be revoked.
func ValidToken(s string) error {
	if strings.ContainsFunc(s, unicode.IsSpace) {
		return ErrTokenWhitespace
	}
	id, secret, ok := strings.Cut(s, ":")
	if !ok || id == "" || strings.ContainsFunc(id, func(r rune) bool { return r < '0' || r > '9' }) {
		return ErrTokenShape
	}
	if len(secret) < minTokenSecret || strings.ContainsFunc(secret, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		return ErrTokenShape
	}
	return nil
}
