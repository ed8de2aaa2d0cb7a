package setting

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// A KeyError is one problem with one configuration key.
type KeyError struct {
	Key  string // full dotted key, e.g. "llm.fast_model"; "" for the document itself
	Line int    // 1-based line in the YAML, 0 when unknown
	Msg  string // what is wrong and what is allowed
}

// Error says the line, the key and what is wrong with it.
func (e *KeyError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Checker collects the problems a validation finds, in the order found. Each method adds
// a problem naming key, the full dotted key, when its value is not allowed.
type Checker []*KeyError

// Add adds a problem with key, its message formatted from format and args.
func (c *Checker) Add(key, format string, args ...any) {
	*c = append(*c, &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// OneOf adds a problem unless v is one of allowed.
func (c *Checker) OneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		c.Add(key, "must be one of %s; got %q", strings.Join(allowed, ", "), v)
	}
}

// HTTPURL adds a problem unless v is an http:// or https:// URL (https:// only with
// httpsOnly). The problem shows v redacted (brain.RedactURL): a token may be in its query or its path.
func (c *Checker) HTTPURL(key, v string, httpsOnly bool) {
	u, err := url.Parse(v)
	ok := err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && !httpsOnly)
	switch {
	case ok:
	case httpsOnly:
		c.Add(key, "must be an https:// URL such as https://bot.example.com/telegram; got %q", brain.RedactURL(v))
	default:
		c.Add(key, "must be an http:// or https:// URL; got %q", brain.RedactURL(v))
	}
}

// Listen adds a problem unless v is a host:port to listen on; example shows one.
func (c *Checker) Listen(key, v, example string) {
	_, port, err := net.SplitHostPort(v)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		c.Add(key, "must be host:port such as %s; got %q", example, v)
	}
}

// Positive adds a problem unless d is greater than 0.
func (c *Checker) Positive(key string, d Duration) {
	if d <= 0 {
		c.Add(key, "must be a duration greater than 0 such as \"90s\" or \"6h\"; got %s", d)
	}
}

// AtLeast adds a problem when n is below least: "at least 1", or for a least of 0 "0 or
// more" with what 0 means where zero says it ("0 (no limit) or more").
func AtLeast[N int | int64](c *Checker, key string, n, least N, zero string) {
	switch {
	case n >= least:
	case least != 0:
		c.Add(key, "must be at least %d; got %d", least, n)
	case zero != "":
		c.Add(key, "must be 0 (%s) or more; got %d", zero, n)
	default:
		c.Add(key, "must be 0 or more; got %d", n)
	}
}

// NotEmpty adds a problem when v is empty or blank.
func (c *Checker) NotEmpty(key, v string) {
	if strings.TrimSpace(v) == "" {
		c.Add(key, "must not be empty")
	}
}
