package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Validate reports every problem with c, joined with errors.Join; each is a
// *KeyError naming the full key and what is allowed. It does not require secrets
// or allowed users; ValidateRun does.
func (c Config) Validate() error {
	return joinKeyErrors(c.validate())
}

// ValidateChat reports the problems Validate does plus those that matter whenever anima
// talks to the model (`anima chat`; ValidateRun includes them): an empty llm.api_key for
// an endpoint that is not on this machine.
func (c Config) ValidateChat() error {
	p := c.validate()
	if e := c.missingAPIKey(); e != nil {
		p = append(p, e)
	}
	return joinKeyErrors(p)
}

// ValidateRun reports the problems ValidateChat does plus those that matter only when
// anima connects to Telegram: a missing token and an empty allow-list. `anima chat`
// does not need them.
func (c Config) ValidateRun() error {
	return joinKeyErrors(c.runProblems())
}

// runProblems are the problems ValidateRun reports.
func (c Config) runProblems() []*KeyError {
	p := c.validate()
	if e := c.missingAPIKey(); e != nil {
		p = append(p, e)
	}
	if c.Telegram.Token == "" {
		p = append(p, &KeyError{Key: "telegram.token", Msg: "is empty: set ANIMA_TELEGRAM_TOKEN or telegram.token"})
	}
	if len(c.Telegram.AllowedUsers) == 0 && !c.Telegram.Public {
		p = append(p, &KeyError{Key: "telegram.allowed_users",
			Msg: "is empty: list the Telegram user ids allowed to talk to anima, or set telegram.public: true"})
	}
	return p
}

// ExampleUserID is the placeholder user id config.yaml ships in telegram.allowed_users.
const ExampleUserID int64 = 123456789

// HasExampleUser reports whether AllowedUsers still holds ExampleUserID, the placeholder
// of config.yaml: anima would ignore its real user.
func (t TelegramConfig) HasExampleUser() bool {
	return slices.Contains(t.AllowedUsers, ExampleUserID)
}

// missingAPIKey reports an empty llm.api_key when llm.base_url is not a loopback
// address: a remote provider would refuse every request, which anima would otherwise
// find out only at the first message. A server on this machine usually needs no key.
func (c Config) missingAPIKey() *KeyError {
	if c.LLM.APIKey != "" {
		return nil
	}
	u, err := url.Parse(c.LLM.BaseURL)
	if err != nil || u.Host == "" || loopbackHost(u.Hostname()) {
		return nil // a malformed URL is reported as llm.base_url
	}
	return &KeyError{Key: "llm.api_key", Msg: fmt.Sprintf("is empty but llm.base_url points at %s, which is not on "+
		"this machine: set ANIMA_LLM_API_KEY or llm.api_key (any value for a server that needs none)", u.Hostname())}
}

// LoopbackURL reports whether rawURL's host is this machine (see loopbackHost): a model
// endpoint there needs no llm.api_key.
func LoopbackURL(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Host != "" && loopbackHost(u.Hostname())
}

// loopbackHost reports whether host names this machine: localhost (or a name under
// .localhost) or a loopback IP address.
func loopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validBotToken reports whether s has the shape of a Bot API token: the bot's numeric id,
// a colon, then at least 30 characters of A-Z a-z 0-9 _ -.
func validBotToken(s string) bool {
	id, key, ok := strings.Cut(s, ":")
	if !ok || id == "" || len(key) < 30 {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return urlSafe(key)
}

// urlSafe reports whether s is made only of A-Z a-z 0-9 _ -.
func urlSafe(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// validSecretToken reports whether s is a webhook secret Telegram accepts: 1–256
// characters of A-Z a-z 0-9 _ -.
func validSecretToken(s string) bool {
	return len(s) >= 1 && len(s) <= 256 && urlSafe(s)
}

// atoi2 reads two ASCII digits; 99 for anything else.
func atoi2(s string) int {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 99
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}
