package config

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain/memory"
	"github.com/anima-bot/anima/plugins/setting"
)

// validate checks the configuration one section at a time; the problems come back in
// the order the sections are checked.
func (c Config) validate() []*KeyError {
	var p checker
	for key, s := range c.Plugins.sections() {
		s.Validate(&p, key)
	}
	c.MCP.Validate(&p, "mcp")
	c.validateTelegram(&p)
	c.validateLLM(&p)
	c.validateLimits(&p)
	c.validateVoice(&p)
	c.validateStorage(&p)
	c.validateProactive(&p)
	c.validateUser(&p)
	c.validatePersona(&p)
	c.validateBrain(&p)
	p.OneOf("llm.answer_format", c.LLM.AnswerFormat, "auto", "json_schema", "text")
	c.validateLog(&p)
	return p
}

// validateTelegram checks telegram: the token's shape (never echoing it), the API URL,
// the mode, the webhook (validateWebhook) and the allowed users.
func (c Config) validateTelegram(p *checker) {
	t := c.Telegram
	switch tok := t.Token.Reveal(); {
	case tok == "": // ValidateRun requires one
	case strings.ContainsFunc(tok, unicode.IsSpace):
		// Never echo the token: not even in an error.
		p.Add("telegram.token", "contains whitespace (a trailing newline from a secret file?): "+
			"remove it; the value is not shown")
	case !validBotToken(tok):
		p.Add("telegram.token", "does not look like a Bot API token from @BotFather: want digits, a colon, "+
			"then 30 or more of A-Z a-z 0-9 _ - (such as 123456789:AAH…); the value is not shown")
	}
	p.HTTPURL("telegram.api_url", t.APIURL, false)
	p.OneOf("telegram.mode", t.Mode, ModePolling, ModeWebhook)
	c.validateWebhook(p)
	for i, id := range t.AllowedUsers {
		if id <= 0 {
			p.Add("telegram.allowed_users", "entry %d is %d: Telegram user ids are positive integers", i+1, id)
		}
	}
}

// validateWebhook checks telegram.webhook.
func (c Config) validateWebhook(p *checker) {
	t := c.Telegram
	p.Listen("telegram.webhook.listen", t.Webhook.Listen, "127.0.0.1:8443")
	switch path := t.Webhook.Path; {
	case !strings.HasPrefix(path, "/"):
		p.Add("telegram.webhook.path", "must start with \"/\", e.g. /telegram; got %q", path)
	case strings.ContainsFunc(path, func(r rune) bool { return r == '{' || r == '}' || unicode.IsSpace(r) }):
		// The path becomes an http.ServeMux pattern, which reads these as a method
		// separator or a wildcard (and panics on a malformed one).
		p.Add("telegram.webhook.path", "must not contain spaces or braces; got %q", path)
	}
	if t.Webhook.PublicURL != "" {
		p.HTTPURL("telegram.webhook.public_url", t.Webhook.PublicURL, true)
	}
	switch secret := t.Webhook.SecretToken; {
	case t.Mode != ModeWebhook:
	case secret == "":
		p.Add("telegram.webhook.secret_token", "is required in webhook mode: set ANIMA_WEBHOOK_SECRET "+
			"to 1–256 characters of A-Z a-z 0-9 _ -")
	case !validSecretToken(string(secret)):
		p.Add("telegram.webhook.secret_token", "must be 1–256 characters of A-Z a-z 0-9 _ -; "+
			"the value set (%d bytes) is too long or has other characters", len(secret))
	}
}

// validateLLM checks llm.
func (c Config) validateLLM(p *checker) {
	l := c.LLM
	p.HTTPURL("llm.base_url", l.BaseURL, false)
	p.NotEmpty("llm.fast_model", l.FastModel)
	p.NotEmpty("llm.smart_model", l.SmartModel)
	p.Positive("llm.request_timeout", l.RequestTimeout)
	if !(l.ConfidenceThreshold >= 0 && l.ConfidenceThreshold <= 1) {
		p.Add("llm.confidence_threshold", "must be between 0 and 1; got %v", l.ConfidenceThreshold)
	}
	setting.AtLeast(p, "llm.daily_token_budget", l.DailyTokenBudget, 0, "unlimited")
	setting.AtLeast(p, "llm.daily_user_token_budget", l.DailyUserTokenBudget, 0, "no per-user share")
	setting.AtLeast(p, "llm.context_tokens", l.ContextTokens, 500, "")
	if !(l.ToolShare > 0 && l.ToolShare <= 0.5) {
		p.Add("llm.tool_share", "must be greater than 0 and at most 0.5 (the rest of the prompt is the conversation's); got %v", l.ToolShare)
	}
	if l.MaxOutputTokens <= 0 {
		p.Add("llm.max_output_tokens", "must be greater than 0; got %d", l.MaxOutputTokens)
	}
	p.Positive("llm.max_audio", l.MaxAudio)
	p.Positive("llm.speech_timeout", l.SpeechTimeout)
}

// validateLimits checks limits.
func (c Config) validateLimits(p *checker) {
	lim := c.Limits
	setting.AtLeast(p, "limits.pending_reminders_per_chat", lim.PendingRemindersPerChat, 1, "")
	setting.AtLeast(p, "limits.reminders_per_run", lim.RemindersPerRun, 1, "")
	setting.AtLeast(p, "limits.user_runs_per_minute", lim.UserRunsPerMinute, 0, "no limit")
	if lim.AudioPerUserPerDay < 0 {
		p.Add("limits.audio_per_user_per_day", "must be 0 (no cap) or more; got %s", lim.AudioPerUserPerDay)
	}
	if lim.SpeechPerUserPerDay < 0 {
		p.Add("limits.speech_per_user_per_day", "must be 0 (no cap) or more; got %s", lim.SpeechPerUserPerDay)
	}
}

// validateVoice checks voice.
func (c Config) validateVoice(p *checker) {
	v := c.Voice
	switch v.Reply {
	case VoiceReplyAuto, VoiceReplyOff:
	case VoiceReplyMirror, VoiceReplyAlways:
		if c.LLM.SpeechModel == "" {
			p.Add("voice.reply", "is %s, but llm.speech_model is empty: set a speech model (e.g. gpt-4o-mini-tts) or use auto or off", v.Reply)
		}
	default:
		p.Add("voice.reply", "must be auto, off, mirror or always; got %q", v.Reply)
	}
	if c.LLM.SpeechModel != "" {
		p.NotEmpty("voice.name", v.Name)
	}
	p.Positive("voice.max_length", v.MaxLength)
}

// maxDeadLetters bounds storage.dead_letters.per_user and per_chat: every burial scans
// the letters kept.
const maxDeadLetters = 10000

// validateStorage checks storage and metrics.
func (c Config) validateStorage(p *checker) {
	p.NotEmpty("storage.path", c.Storage.Path)
	p.Positive("storage.compact_interval", c.Storage.CompactInterval)
	for _, k := range []struct {
		key string
		n   int
	}{{"storage.dead_letters.per_user", c.Storage.DeadLetters.PerUser}, {"storage.dead_letters.per_chat", c.Storage.DeadLetters.PerChat}} {
		if k.n < 1 || k.n > maxDeadLetters {
			p.Add(k.key, "must be 1 to %d; got %d", maxDeadLetters, k.n)
		}
	}
	if c.Metrics.Listen != "" {
		p.Listen("metrics.listen", c.Metrics.Listen, "127.0.0.1:9464 (or \"\" to disable)")
	}
}

// validateProactive checks proactive.
func (c Config) validateProactive(p *checker) {
	pr := c.Proactive
	p.Positive("proactive.min_silence", pr.MinSilence)
	p.Positive("proactive.cooldown", pr.Cooldown)
	p.Positive("proactive.followup_after", pr.FollowupAfter)
	// proactive.quiet_hours is checked as it is decoded: a brain.QuietHours is valid.
	setting.AtLeast(p, "proactive.max_per_day", pr.MaxPerDay, 0, "")
	if pr.Jitter < 0 || pr.Jitter.Std() > 6*time.Hour {
		p.Add("proactive.jitter", "must be between 0 (exact thresholds) and 6h; got %s", pr.Jitter)
	}
}

// validateUser checks user.timezone and user.language.
func (c Config) validateUser(p *checker) {
	if !slices.Contains(memory.Languages, c.User.Language) {
		p.Add("user.language", "must be one of %s; got %q", strings.Join(memory.Languages, ", "), c.User.Language)
	}
	switch tz := c.User.Timezone; {
	case tz == "" || tz == "Local":
		p.Add("user.timezone", "must be an IANA time zone such as Europe/Berlin or UTC; got %q", tz)
	default:
		if _, err := time.LoadLocation(tz); err != nil {
			p.Add("user.timezone", "unknown time zone %q: use an IANA name such as Europe/Berlin or UTC.%s", tz, didYouMean(tz))
		}
	}
}

// validatePersona checks persona.
func (c Config) validatePersona(p *checker) {
	p.NotEmpty("persona.name", c.Persona.Name)
	p.NotEmpty("persona.apology", c.Persona.Apology)
	if n := len(c.Persona.Interests); n > MaxInterests {
		p.Add("persona.interests", "at most %d interests; got %d", MaxInterests, n)
	}
	for i, in := range c.Persona.Interests {
		switch {
		case strings.TrimSpace(in) == "":
			p.Add("persona.interests", "item %d is empty: each interest is a short line such as \"where words come from\"", i+1)
		case utf8.RuneCountInString(in) > MaxInterestRunes:
			p.Add("persona.interests", "item %d is %d characters long; at most %d", i+1, utf8.RuneCountInString(in), MaxInterestRunes)
		}
	}
}

// validateBrain checks brain.tick.
func (c Config) validateBrain(p *checker) {
	if tick := c.Brain.Tick; tick < Duration(10*time.Millisecond) || tick > Duration(time.Minute) {
		p.Add("brain.tick", "must be between 10ms and 1m; got %s", tick)
	}
}

// validateLog checks log.
func (c Config) validateLog(p *checker) {
	p.OneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	p.OneOf("log.format", c.Log.Format, "text", "json")
}
