package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain"
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
	return joinKeyErrors(p)
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

type checker []*KeyError

func (c *checker) add(key, format string, args ...any) {
	*c = append(*c, &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) oneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		c.add(key, "must be one of %s; got %q", strings.Join(allowed, ", "), v)
	}
}

func (c *checker) httpURL(key, v string, httpsOnly bool) {
	u, err := url.Parse(v)
	ok := err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http" && !httpsOnly)
	switch {
	case ok:
	case httpsOnly:
		c.add(key, "must be an https:// URL such as https://bot.example.com/telegram; got %q", v)
	default:
		c.add(key, "must be an http:// or https:// URL; got %q", v)
	}
}

func (c *checker) listen(key, v, example string) {
	_, port, err := net.SplitHostPort(v)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		c.add(key, "must be host:port such as %s; got %q", example, v)
	}
}

func (c *checker) positive(key string, d Duration) {
	if d <= 0 {
		c.add(key, "must be a duration greater than 0 such as \"90s\" or \"6h\"; got %s", d)
	}
}

func (c *checker) notEmpty(key, v string) {
	if strings.TrimSpace(v) == "" {
		c.add(key, "must not be empty")
	}
}

func (c Config) validate() []*KeyError {
	var p checker

	il := c.Plugins.Innerlife
	if h, m, ok := strings.Cut(il.DreamAt, ":"); !ok || len(h) != 2 || len(m) != 2 || atoi2(h) > 23 || atoi2(m) > 59 {
		p.add("plugins.innerlife.dream_at", "want a local time \"HH:MM\" such as \"04:00\"; got %q", il.DreamAt)
	}
	p.positive("plugins.innerlife.dream_min_quiet", il.DreamMinQuiet)
	if il.JournalPerDay < 1 {
		p.add("plugins.innerlife.journal_per_day", "must be at least 1; got %d", il.JournalPerDay)
	}

	c.validateMCP(&p)

	t := c.Telegram
	switch tok := t.Token.Reveal(); {
	case tok == "": // ValidateRun requires one
	case strings.ContainsFunc(tok, unicode.IsSpace):
		// Never echo the token: not even in an error.
		p.add("telegram.token", "contains whitespace (a trailing newline from a secret file?): "+
			"remove it; the value is not shown")
	case !validBotToken(tok):
		p.add("telegram.token", "does not look like a Bot API token from @BotFather: want digits, a colon, "+
			"then 30 or more of A-Z a-z 0-9 _ - (such as 123456789:AAH…); the value is not shown")
	}
	p.httpURL("telegram.api_url", t.APIURL, false)
	p.oneOf("telegram.mode", t.Mode, ModePolling, ModeWebhook)
	p.listen("telegram.webhook.listen", t.Webhook.Listen, "127.0.0.1:8443")
	switch path := t.Webhook.Path; {
	case !strings.HasPrefix(path, "/"):
		p.add("telegram.webhook.path", "must start with \"/\", e.g. /telegram; got %q", path)
	case strings.ContainsFunc(path, func(r rune) bool { return r == '{' || r == '}' || unicode.IsSpace(r) }):
		// The path becomes an http.ServeMux pattern, which reads these as a method
		// separator or a wildcard (and panics on a malformed one).
		p.add("telegram.webhook.path", "must not contain spaces or braces; got %q", path)
	}
	if t.Webhook.PublicURL != "" {
		p.httpURL("telegram.webhook.public_url", t.Webhook.PublicURL, true)
	}
	switch secret := t.Webhook.SecretToken; {
	case t.Mode != ModeWebhook:
	case secret == "":
		p.add("telegram.webhook.secret_token", "is required in webhook mode: set ANIMA_WEBHOOK_SECRET "+
			"to 1–256 characters of A-Z a-z 0-9 _ -")
	case !validSecretToken(string(secret)):
		p.add("telegram.webhook.secret_token", "must be 1–256 characters of A-Z a-z 0-9 _ -; "+
			"the value set (%d bytes) is too long or has other characters", len(secret))
	}
	for i, id := range t.AllowedUsers {
		if id <= 0 {
			p.add("telegram.allowed_users", "entry %d is %d: Telegram user ids are positive integers", i+1, id)
		}
	}

	l := c.LLM
	p.httpURL("llm.base_url", l.BaseURL, false)
	p.notEmpty("llm.fast_model", l.FastModel)
	p.notEmpty("llm.smart_model", l.SmartModel)
	p.positive("llm.request_timeout", l.RequestTimeout)
	if !(l.ConfidenceThreshold >= 0 && l.ConfidenceThreshold <= 1) {
		p.add("llm.confidence_threshold", "must be between 0 and 1; got %v", l.ConfidenceThreshold)
	}
	if l.DailyTokenBudget < 0 {
		p.add("llm.daily_token_budget", "must be 0 (unlimited) or more; got %d", l.DailyTokenBudget)
	}
	if l.DailyUserTokenBudget < 0 {
		p.add("llm.daily_user_token_budget", "must be 0 (no per-user share) or more; got %d", l.DailyUserTokenBudget)
	}
	if l.ContextTokens < 500 {
		p.add("llm.context_tokens", "must be at least 500; got %d", l.ContextTokens)
	}
	if l.MaxOutputTokens <= 0 {
		p.add("llm.max_output_tokens", "must be greater than 0; got %d", l.MaxOutputTokens)
	}
	p.positive("llm.max_audio", l.MaxAudio)

	lim := c.Limits
	if lim.PendingRemindersPerChat < 1 {
		p.add("limits.pending_reminders_per_chat", "must be at least 1; got %d", lim.PendingRemindersPerChat)
	}
	if lim.RemindersPerRun < 1 {
		p.add("limits.reminders_per_run", "must be at least 1; got %d", lim.RemindersPerRun)
	}
	if lim.UserRunsPerMinute < 0 {
		p.add("limits.user_runs_per_minute", "must be 0 (no limit) or more; got %d", lim.UserRunsPerMinute)
	}
	if lim.AudioPerUserPerDay < 0 {
		p.add("limits.audio_per_user_per_day", "must be 0 (no cap) or more; got %s", lim.AudioPerUserPerDay)
	}

	p.notEmpty("storage.path", c.Storage.Path)
	p.positive("storage.compact_interval", c.Storage.CompactInterval)
	if c.Metrics.Listen != "" {
		p.listen("metrics.listen", c.Metrics.Listen, "127.0.0.1:9464 (or \"\" to disable)")
	}

	pr := c.Proactive
	p.positive("proactive.min_silence", pr.MinSilence)
	p.positive("proactive.cooldown", pr.Cooldown)
	p.positive("proactive.followup_after", pr.FollowupAfter)
	// proactive.quiet_hours is checked as it is decoded: a brain.QuietHours is valid.
	if pr.MaxPerDay < 0 {
		p.add("proactive.max_per_day", "must be 0 or more; got %d", pr.MaxPerDay)
	}
	if pr.Jitter < 0 || pr.Jitter.Std() > 6*time.Hour {
		p.add("proactive.jitter", "must be between 0 (exact thresholds) and 6h; got %s", pr.Jitter)
	}

	switch tz := c.User.Timezone; {
	case tz == "" || tz == "Local":
		p.add("user.timezone", "must be an IANA time zone such as Europe/Berlin or UTC; got %q", tz)
	default:
		if _, err := time.LoadLocation(tz); err != nil {
			p.add("user.timezone", "unknown time zone %q: use an IANA name such as Europe/Berlin or UTC", tz)
		}
	}

	p.notEmpty("persona.name", c.Persona.Name)
	p.notEmpty("persona.apology", c.Persona.Apology)
	if n := len(c.Persona.Interests); n > MaxInterests {
		p.add("persona.interests", "at most %d interests; got %d", MaxInterests, n)
	}
	for i, in := range c.Persona.Interests {
		switch {
		case strings.TrimSpace(in) == "":
			p.add("persona.interests", "item %d is empty: each interest is a short line such as \"where words come from\"", i+1)
		case utf8.RuneCountInString(in) > MaxInterestRunes:
			p.add("persona.interests", "item %d is %d characters long; at most %d", i+1, utf8.RuneCountInString(in), MaxInterestRunes)
		}
	}

	if tick := c.Brain.Tick; tick < Duration(10*time.Millisecond) || tick > Duration(time.Minute) {
		p.add("brain.tick", "must be between 10ms and 1m; got %s", tick)
	}

	p.oneOf("llm.answer_format", c.LLM.AnswerFormat, "auto", "json_schema", "text")
	p.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	p.oneOf("log.format", c.Log.Format, "text", "json")
	return p
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

// mcpServerName is what an MCP server's name may be: it prefixes its tools' names.
func mcpServerName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (c Config) validateMCP(p *checker) {
	for _, name := range slices.Sorted(maps.Keys(c.MCP.Servers)) {
		s := c.MCP.Servers[name]
		key := "mcp.servers." + name
		if !mcpServerName(name) {
			p.add(key, "a server's name prefixes its tools' names: use 1 to 32 of A-Z a-z 0-9 - (no _); got %q", name)
		}
		switch {
		case len(s.Command) > 0 && s.URL != "":
			p.add(key, "set either command (a stdio server) or url (streamable HTTP), not both")
		case len(s.Command) == 0 && s.URL == "":
			p.add(key, "set command (the argv of a stdio server) or url (a streamable-HTTP endpoint)")
		case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
			p.add(key+".command", "the program (its first element) must not be empty")
		case s.URL != "":
			p.httpURL(key+".url", s.URL, false)
		}
		if len(s.Headers) > 0 && s.URL == "" {
			p.add(key+".headers", "are sent only to a url server; this one runs a command")
		}
		for _, pr := range s.Profiles {
			p.oneOf(key+".profiles", string(pr), string(brain.ProfileChat), string(brain.ProfileProactive), string(brain.ProfileDream))
		}
		for _, t := range s.Tools {
			p.notEmpty(key+".tools", t)
		}
	}
}
