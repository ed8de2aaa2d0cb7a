package brain

import (
	"net/url"
	"regexp"
	"strings"
)

// RedactURL returns the URL raw with every part that may carry a secret replaced by ***:
// its userinfo (https://***@host, for https://user:token@host), every path segment that
// looks like a key (/v1/***, for /v1/sk-…: some endpoints take the key in the path), its
// query (?***, for ?api_key=… or ?token=…) and its fragment (#***). Scheme, host, port
// and the other path segments stay, to say which endpoint it is. A text that does not
// parse as a URL is replaced whole. It is the one redaction of a URL anima prints or logs:
// errors, log lines, /status, the commands' output.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL, not shown)"
	}
	user, query, frag := u.User != nil, u.RawQuery != "" || u.ForceQuery, u.Fragment != "" || u.RawFragment != ""
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	if u.Opaque != "" {
		u.Opaque = redactPath(u.Opaque)
	} else if p := redactPath(u.EscapedPath()); p != u.EscapedPath() {
		unescaped, err := url.PathUnescape(p)
		if err != nil {
			return "(a URL, not shown)"
		}
		u.Path, u.RawPath = unescaped, p
	}
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

// redactPath returns the escaped path p with every segment that looks like a key
// replaced by ***.
func redactPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if plain, err := url.PathUnescape(s); err == nil {
			s = plain
		}
		if keyLike(s) {
			segs[i] = "***"
		}
	}
	return strings.Join(segs, "/")
}

// keyPrefixes start the API keys and tokens of the common providers (OpenAI's and
// Anthropic's sk-, Stripe's, GitHub's, GitLab's, Slack's, Hugging Face's, Groq's,
// Google's): a segment that starts with one is taken for a key whatever its length.
var keyPrefixes = []string{"sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_",
	"glpat-", "xoxa-", "xoxb-", "xoxp-", "xapp-", "hf_", "gsk_", "AIza"}

// botToken is a Telegram bot token, as the Bot API's URLs hold it (/bot<id>:<secret>/).
var botToken = regexp.MustCompile(`^(?:bot)?[0-9]{5,}:[A-Za-z0-9_-]{20,}$`)

// keyLike reports whether a path segment looks like a key rather than a name: it starts
// with a provider's key prefix, or is a bot token, or holds a run of 16 or more letters
// and digits with a digit in it or both cases (a word such as "completions" has neither),
// or a run of 32 or more letters, digits, '-' and '_' with a digit in it (a UUID, a
// base64url secret; a model's name such as gpt-4o-mini-2024-07-18 is shorter).
func keyLike(s string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	if botToken.MatchString(s) {
		return true
	}
	return longRun(s, 16, false) || longRun(s, 32, true)
}

// longRun reports whether s holds a run of at least n letters and digits ('-' and '_'
// too with dashes) that has a digit in it, or (without dashes) both upper and lower case.
func longRun(s string, n int, dashes bool) bool {
	length, digit, upper, lower := 0, false, false, false
	for i := 0; i <= len(s); i++ {
		var c byte
		if i < len(s) {
			c = s[i]
		}
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case dashes && (c == '-' || c == '_'):
		default:
			if length >= n && (digit || !dashes && upper && lower) {
				return true
			}
			length, digit, upper, lower = 0, false, false, false
			continue
		}
		length++
	}
	return false
}

// urlInText is an http or https URL inside a text, up to a space, a quote or an angle
// bracket (net/http's errors quote the URL: Post "https://…": …).
var urlInText = regexp.MustCompile("(?i)\\bhttps?://[^\\s\"'`<>]+")

// RedactURLs returns text with every http and https URL in it redacted (RedactURL): the
// errors of net/http and of the clients built on it carry the URL they tried, path, query
// and all (net/http masks only a password). Punctuation that ends a URL's sentence
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
