package setting

import (
	"net/url"
	"regexp"
	"strings"
)

// RedactURL returns the URL raw with its userinfo, query and fragment each replaced by
// *** (https://***@host/path?***): a URL may carry a secret in any of them
// (https://user:token@host, ?api_key=…), and it is printed in errors, log lines, /status
// and the commands' output. Scheme, host, port and path stay, to say which endpoint it
// is. A text that does not parse as a URL is replaced whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL, not shown)"
	}
	user, query, frag := u.User != nil, u.RawQuery != "" || u.ForceQuery, u.Fragment != "" || u.RawFragment != ""
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	s := u.String()
	if user {
		s = strings.Replace(s, "://", "://***@", 1)
	}
	if query {
		s += "?***"
	}
	if frag {
		s += "#***"
	}
	return s
}

// urlInText is an http or https URL inside a text, up to a space, a quote or an angle
// bracket (net/http's errors quote the URL: Post "https://…": …).
var urlInText = regexp.MustCompile("(?i)\\bhttps?://[^\\s\"'`<>]+")

// RedactURLs returns text with every http and https URL in it redacted (RedactURL): the
// errors of net/http and of the clients built on it carry the URL they tried, query and
// all (net/http masks only a password). Punctuation that ends a URL's sentence
// ("…:8080; try…") is taken for the sentence's, not the URL's.
func RedactURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, func(u string) string {
		trimmed := strings.TrimRight(u, ".,;:!?)]}")
		return RedactURL(trimmed) + u[len(trimmed):]
	})
}
