// Package config is anima's configuration: the schema with its defaults (config.go), the
// strict YAML loading with ${VAR} expansion and did-you-mean suggestions (load.go,
// walk.go, env.go), the validation that alone judges what a user wrote (validate.go), and
// the value types the schema is written in (package setting, aliased in types.go, which the
// plugins' own sections use too). The YAML keys are a public contract documented in
// config.yaml at the repository root.
package config

import (
	"fmt"
	"log/slog"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins/innerlife"
	"github.com/anima-bot/anima/plugins/mcp"
)

// Config is anima's configuration, read from YAML by Load. The YAML keys (the
// struct tags) are a public contract documented in config.yaml at the repo root.
type Config struct {
	Telegram  TelegramConfig  `yaml:"telegram"`
	LLM       LLMConfig       `yaml:"llm"`
	Storage   StorageConfig   `yaml:"storage"`
	Metrics   MetricsConfig   `yaml:"metrics"`
	Proactive ProactiveConfig `yaml:"proactive"`
	User      UserConfig      `yaml:"user"`
	Persona   PersonaConfig   `yaml:"persona"`
	Brain     BrainConfig     `yaml:"brain"`
	Limits    LimitsConfig    `yaml:"limits"`
	Voice     VoiceConfig     `yaml:"voice"`
	Log       LogConfig       `yaml:"log"`
	Plugins   PluginsConfig   `yaml:"plugins"`
	MCP       mcp.Config      `yaml:"mcp"`
}

// PluginsConfig is the list of the plugins compiled into anima: one section per built-in
// plugin (plugins.<name>), each the plugin's own Config type. Its package says what the
// keys mean, sets their defaults, validates them and builds the plugin (the section
// interface); the section is decoded as strictly as the rest (an unknown key is an error
// naming the key and so the plugin). A new built-in plugin adds its field here, one line;
// Default, Validate and Installed find it.
type PluginsConfig struct {
	Innerlife innerlife.Config `yaml:"innerlife"`
}

// Telegram update delivery modes, the allowed values of telegram.mode.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// TelegramConfig is the telegram section: how to reach the Bot API and who may talk to anima.
type TelegramConfig struct {
	Token   Secret        `yaml:"token"`   // Bot API token from @BotFather
	APIURL  string        `yaml:"api_url"` // Bot API base URL; a fake or a self-hosted Bot API server
	Mode    string        `yaml:"mode"`    // ModePolling or ModeWebhook
	Webhook WebhookConfig `yaml:"webhook"`
	// AllowedUsers are the Telegram user ids anima answers. ValidateRun refuses an
	// empty list unless Public is set.
	AllowedUsers []int64 `yaml:"allowed_users"`
	Public       bool    `yaml:"public"` // answer everyone
	// StreamReplies shows a reply in a private chat as it is written (sendMessageDraft)
	// before the complete reply is sent; default true.
	StreamReplies bool `yaml:"stream_replies"`
}

// WebhookConfig is telegram.webhook, used when telegram.mode is webhook.
type WebhookConfig struct {
	Listen string `yaml:"listen"` // host:port the webhook HTTP server binds
	Path   string `yaml:"path"`   // HTTP path updates are posted to, starting with "/"
	// PublicURL is the public https base URL (scheme, host, maybe a path prefix)
	// Telegram reaches the server at; anima registers PublicURL + Path with
	// setWebhook. Empty means the webhook is registered by other means.
	PublicURL string `yaml:"public_url"`
	// SecretToken is sent by Telegram in X-Telegram-Bot-Api-Secret-Token: 1–256
	// characters of A-Z a-z 0-9 _ -. Required in webhook mode.
	SecretToken Secret `yaml:"secret_token"`
}

// LLMConfig is the llm section: an OpenAI-compatible endpoint and the budget for it.
type LLMConfig struct {
	BaseURL             string   `yaml:"base_url"` // OpenAI-compatible API base, e.g. https://api.openai.com/v1
	APIKey              Secret   `yaml:"api_key"`
	FastModel           string   `yaml:"fast_model"`           // cheap model for routine turns
	SmartModel          string   `yaml:"smart_model"`          // model used when the fast one is unsure
	RequestTimeout      Duration `yaml:"request_timeout"`      // per request, > 0
	ConfidenceThreshold float64  `yaml:"confidence_threshold"` // in [0,1]; below it the smart model is used
	DailyTokenBudget    int64    `yaml:"daily_token_budget"`   // tokens per day; 0 = unlimited
	// DailyUserTokenBudget is each user's share of the day's tokens; 0 = no per-user share.
	DailyUserTokenBudget int64 `yaml:"daily_user_token_budget"`
	ContextTokens        int   `yaml:"context_tokens"` // prompt budget, ≥ 500
	// ToolShare is the part of ContextTokens all MCP tool definitions may take together,
	// in (0, 0.5]; past it, tools are left out of the run, the largest first.
	ToolShare       float64 `yaml:"tool_share"`
	MaxOutputTokens int     `yaml:"max_output_tokens"` // completion limit, > 0
	// TranscriptionModel transcribes voice notes on the same endpoint; "" switches
	// listening off.
	TranscriptionModel string   `yaml:"transcription_model"`
	MaxAudio           Duration `yaml:"max_audio"` // longest recording transcribed, > 0
	Vision             bool     `yaml:"vision"`    // photos are shown to the model
	// SpeechModel speaks replies as voice notes on the same endpoint (/audio/speech, e.g.
	// gpt-4o-mini-tts); "" (the default) switches speaking off, and nothing of it is built.
	SpeechModel string `yaml:"speech_model"`
	// SpeechTimeout bounds one speech request, the audio read with it (> 0; at most
	// RequestTimeout takes effect); past it the reply goes as text.
	SpeechTimeout Duration `yaml:"speech_timeout"`
	// AnswerFormat is how the final answer is asked for: json_schema (a strict
	// response_format beside the tools), text (the prompt alone), or auto: json_schema on
	// api.openai.com, text elsewhere (Ollama, for one, calls no tools while a format is set).
	AnswerFormat string `yaml:"answer_format"`
	// EmbeddingModel embeds the turns on the same endpoint (/embeddings, e.g.
	// text-embedding-3-small, or Ollama's nomic-embed-text), so that recall finds by
	// meaning as well as by words; "" (the default) keeps recall lexical, and nothing of
	// it is built.
	EmbeddingModel string `yaml:"embedding_model"`
}

// StorageConfig is the storage section.
type StorageConfig struct {
	Path string `yaml:"path"` // bbolt database file
	// CompactInterval is the least time between two compactions that erase forgotten
	// data from the file (the first after a quiet spell runs a second after /forget).
	CompactInterval Duration `yaml:"compact_interval"`
	// DeadLetters caps the failed work kept for `anima dead` (storage.dead_letters).
	DeadLetters DeadLettersConfig `yaml:"dead_letters"`
}

// DeadLettersConfig is storage.dead_letters: how many dead letters are kept for one user
// (in every chat) and in one chat; past either, burying one more drops the oldest.
type DeadLettersConfig struct {
	PerUser int `yaml:"per_user"`
	PerChat int `yaml:"per_chat"`
}

// MetricsConfig is the metrics section.
type MetricsConfig struct {
	// Listen is the host:port serving /metrics, /healthz and /readyz; "" disables it.
	Listen string `yaml:"listen"`
}

// ProactiveConfig is the proactive section: when anima may write first.
type ProactiveConfig struct {
	Enabled       bool     `yaml:"enabled"`
	MinSilence    Duration `yaml:"min_silence"`    // silence before anima may reach out
	Cooldown      Duration `yaml:"cooldown"`       // minimum gap between proactive messages
	FollowupAfter Duration `yaml:"followup_after"` // delay before following up on an open topic
	// QuietHours is the daily window "HH:MM-HH:MM" in the user's zone without proactive
	// messages; "" for none.
	QuietHours brain.QuietHours `yaml:"quiet_hours"`
	MaxPerDay  int              `yaml:"max_per_day"` // proactive messages per day, ≥ 0
	// Jitter spreads thresholds and window edges (0 = exact, at most 6h): see
	// brain.ProactivePolicy.Jitter.
	Jitter Duration `yaml:"jitter"`
}

// Policy is the proactive section as the brain applies it: the one conversion, shared by
// the aggregation and autonomic layers, /status and `anima sim`.
func (p ProactiveConfig) Policy() brain.ProactivePolicy {
	return brain.ProactivePolicy{
		Enabled:       p.Enabled,
		MinSilence:    p.MinSilence.Std(),
		Cooldown:      p.Cooldown.Std(),
		FollowupAfter: p.FollowupAfter.Std(),
		QuietHours:    p.QuietHours,
		MaxPerDay:     p.MaxPerDay,
		Jitter:        p.Jitter.Std(),
	}
}

// UserConfig is the user section.
type UserConfig struct {
	Timezone string `yaml:"timezone"` // IANA name, e.g. Europe/Berlin; quiet hours use it
	// Language is the language whose words memory's search stems (memory.Languages).
	Language string `yaml:"language"`
}

// Location returns the time zone named by Timezone.
func (u UserConfig) Location() (*time.Location, error) {
	loc, err := time.LoadLocation(u.Timezone)
	if err != nil {
		return nil, fmt.Errorf("load time zone %q: %w", u.Timezone, err)
	}
	return loc, nil
}

// PersonaConfig is the persona section: who anima is.
type PersonaConfig struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"` // character notes given to the model
	Apology     string `yaml:"apology"`     // sent when a reply cannot be produced
	// Interests are anima's own: things it may bring up when it writes first and has nothing
	// of the person's to pick up. At most MaxInterests, each at most MaxInterestRunes.
	Interests []string `yaml:"interests"`
	// VoiceStyle is an optional line on how anima's voice sounds (the speech request's
	// instructions, e.g. "warm and unhurried"); "" leaves it to the voice.
	VoiceStyle string `yaml:"voice_style"`
}

// Limits of persona.interests: a short list of short lines.
const (
	MaxInterests     = 10
	MaxInterestRunes = 80
)

// BrainConfig is the brain section.
type BrainConfig struct {
	Tick Duration `yaml:"tick"` // how often the core loop wakes, 10ms–1m
}

// LimitsConfig is the limits section: what one user (or one run of the model) may cost.
type LimitsConfig struct {
	PendingRemindersPerChat int `yaml:"pending_reminders_per_chat"` // ≥ 1
	RemindersPerRun         int `yaml:"reminders_per_run"`          // new reminders one model run may set, ≥ 1
	UserRunsPerMinute       int `yaml:"user_runs_per_minute"`       // model runs a user may cause a minute; 0 = no limit
	// AudioPerUserPerDay is how much of one user's voice notes, audio and video notes is
	// transcribed a day (llm.transcription_model); 0 = no cap.
	AudioPerUserPerDay Duration `yaml:"audio_per_user_per_day"`
	// SpeechPerUserPerDay is how much speech anima makes for one user a day
	// (llm.speech_model); 0 = no cap. Past it, replies go as text.
	SpeechPerUserPerDay Duration `yaml:"speech_per_user_per_day"`
}

// Voice reply modes, the allowed values of voice.reply.
const (
	VoiceReplyAuto   = "auto"
	VoiceReplyOff    = "off"
	VoiceReplyMirror = "mirror"
	VoiceReplyAlways = "always"
)

// VoiceConfig is the voice section: when and how anima speaks its replies
// (llm.speech_model).
type VoiceConfig struct {
	// Reply is when replies are spoken: off (only to those who ask, /voice on), mirror (a
	// voice note is answered with one), always, or auto: mirror when llm.speech_model is
	// set, else off.
	Reply string `yaml:"reply"`
	Name  string `yaml:"name"` // the endpoint's voice, e.g. alloy, coral, sage
	// MaxLength is the longest reply spoken (estimated before it is made); a longer one
	// goes as text.
	MaxLength Duration `yaml:"max_length"`
}

// VoiceMode resolves voice.reply (auto) against llm.speech_model.
func (c Config) VoiceMode() brain.VoiceMode {
	if c.Voice.Reply == VoiceReplyAuto || c.Voice.Reply == "" {
		if c.LLM.SpeechModel == "" {
			return brain.VoiceOff
		}
		return brain.VoiceMirror
	}
	return brain.VoiceMode(c.Voice.Reply)
}

// LogConfig is the log section.
type LogConfig struct {
	Level       string `yaml:"level"`        // debug, info, warn or error
	Format      string `yaml:"format"`       // text or json
	MessageText bool   `yaml:"message_text"` // log message texts; for debugging only
	// Replies logs one INFO line per message anima sends from a model run (chat and user
	// ids, kind, model, latency, tokens; never the text).
	Replies bool `yaml:"replies"`
}

// SlogLevel returns Level as a slog.Level; an invalid level (rejected by Validate) is info.
func (l LogConfig) SlogLevel() slog.Level {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.Level)); err != nil {
		return slog.LevelInfo
	}
	return lvl
}

// Default returns the built-in configuration. Load decodes the file over it, so a
// key missing from the file keeps its default. Secrets are empty and
// telegram.allowed_users is empty.
func Default() Config {
	c := Config{
		Telegram: TelegramConfig{
			APIURL:        "https://api.telegram.org",
			Mode:          ModePolling,
			StreamReplies: true,
			Webhook: WebhookConfig{
				Listen: "127.0.0.1:8443",
				Path:   "/telegram",
			},
		},
		LLM: LLMConfig{
			BaseURL:             "https://api.openai.com/v1",
			FastModel:           "gpt-4o-mini",
			SmartModel:          "gpt-4o",
			RequestTimeout:      Duration(60 * time.Second),
			ConfidenceThreshold: 0.6,
			ContextTokens:       6000,
			ToolShare:           0.25,
			MaxOutputTokens:     800,
			TranscriptionModel:  "whisper-1",
			MaxAudio:            Duration(10 * time.Minute),
			Vision:              true,
			SpeechTimeout:       Duration(20 * time.Second),
			AnswerFormat:        "auto",
			// DailyUserTokenBudget: a heavy day of chat (about 150 turns of 6000 tokens).
			DailyUserTokenBudget: 1_000_000,
		},
		Storage: StorageConfig{Path: "./data/anima.db", CompactInterval: Duration(10 * time.Minute),
			DeadLetters: DeadLettersConfig{PerUser: 50, PerChat: 50}}, // storage.DeadPerUser, DeadPerChat
		Metrics: MetricsConfig{Listen: "127.0.0.1:9464"},
		Proactive: ProactiveConfig{
			Enabled:       true,
			MinSilence:    Duration(6 * time.Hour),
			Cooldown:      Duration(3 * time.Hour),
			FollowupAfter: Duration(3 * time.Hour),
			QuietHours:    brain.DefaultProactivePolicy().QuietHours, // "22:30-08:30"
			MaxPerDay:     2,
			Jitter:        Duration(time.Hour),
		},
		User: UserConfig{Timezone: "UTC", Language: "english"},
		Persona: PersonaConfig{
			Name: "Anima",
			Description: "A warm, curious companion. Remembers what the person shares and " +
				"asks about it later; asks one thoughtful question at a time; celebrates small " +
				"wins and sits with hard days without rushing to fix them. Speaks plainly and " +
				"briefly, in the person's own language, with gentle humour. Honest about being " +
				"an AI, never pretends to have done things it has not, and never lectures.",
			Apology: "Sorry — my thoughts got tangled just now. Could you say that again in a minute?",
			Interests: []string{
				"birds, and what they are up to in each season",
				"where words come from",
				"things people make by hand: bread, gardens, mended clothes",
			},
		},
		Brain: BrainConfig{Tick: Duration(time.Second)},
		Limits: LimitsConfig{PendingRemindersPerChat: 50, RemindersPerRun: 4, UserRunsPerMinute: 20, AudioPerUserPerDay: Duration(30 * time.Minute),
			SpeechPerUserPerDay: Duration(10 * time.Minute)},
		Voice: VoiceConfig{Reply: VoiceReplyAuto, Name: "alloy", MaxLength: Duration(time.Minute)},
		Log:   LogConfig{Level: "info", Format: "text", Replies: true},
	}
	for _, s := range c.Plugins.sections() {
		s.SetDefaults()
	}
	return c
}

// Redacted returns c as YAML with every secret (telegram.token, llm.api_key,
// telegram.webhook.secret_token) shown as "[redacted]", or "" when unset.
func (c Config) Redacted() string {
	out, err := yaml.Marshal(c)
	if err != nil {
		return "# config cannot be printed: " + err.Error() + "\n"
	}
	return string(out)
}
