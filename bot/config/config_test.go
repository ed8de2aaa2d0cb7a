package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // user.timezone tests must not depend on the host's zoneinfo
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/anima-bot/anima/brain"
)

// fakeToken has the shape of a Bot API token (digits, a colon, 30+ URL-safe characters).
const fakeToken = "123456:TEST-fake-token-ABCDEFGHIJKLMNOPQRSTUV"

// noEnv is a lookup for parse with no environment variables set.
func noEnv(string) (string, bool) { return "", false }

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// keyErrors returns the *KeyError values joined in err.
func keyErrors(t *testing.T, err error) []*KeyError {
	t.Helper()
	var out []*KeyError
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	for _, e := range errs {
		ke, ok := errors.AsType[*KeyError](e)
		if !ok {
			t.Fatalf("error %q is not a *KeyError", e)
		}
		out = append(out, ke)
	}
	return out
}

func TestConfigDefaultValid(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
}

func TestConfigExampleFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parse(data, noEnv)
	if err != nil {
		t.Fatalf("config.yaml does not parse: %v", err)
	}
	// The example documents the defaults; only the allow-list differs.
	want := Default()
	want.Telegram.AllowedUsers = []int64{123456789}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("config.yaml differs from Default() (-want +got):\n%s", diff)
	}
}

func TestConfigLoadExampleWithEnv(t *testing.T) {
	t.Setenv("ANIMA_TELEGRAM_TOKEN", fakeToken)
	t.Setenv("ANIMA_LLM_API_KEY", "sk-key")
	t.Setenv("ANIMA_WEBHOOK_SECRET", "s3cret_-")
	cfg, err := Load("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.ValidateRun(); err != nil {
		t.Errorf("ValidateRun() = %v", err)
	}
	got := []string{cfg.Telegram.Token.Reveal(), cfg.LLM.APIKey.Reveal(), cfg.Telegram.Webhook.SecretToken.Reveal()}
	if diff := cmp.Diff([]string{fakeToken, "sk-key", "s3cret_-"}, got); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}

func TestConfigLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("llm:\n  fast_model: a\n  fast_modle: b\nlog:\n  level: loud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	// Every problem at once: the unknown key and the value (issue 36).
	want := path + `: line 3: llm.fast_modle: unknown key; did you mean "fast_model"?` + "\n" +
		path + `: line 5: log.level: must be one of debug, info, warn, error; got "loud"`
	if err == nil || err.Error() != want {
		t.Errorf("Load() error = %v, want %s", err, want)
	}
	if _, ok := errors.AsType[*KeyError](err); !ok {
		t.Errorf("Load() error %v does not unwrap to *KeyError", err)
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want os.ErrNotExist", err)
	}
}

func TestConfigEnvExpansion(t *testing.T) {
	t.Parallel()
	env := envMap(map[string]string{
		"TOKEN":     "123:abc # not a comment: really",
		"EMPTY":     "",
		"CTX":       "7000",
		"OWNER":     "42",
		"MODE":      "webhook",
		"SECRET":    "abc_DEF-1",
		"BOT_TOKEN": fakeToken,
	})
	tests := []struct {
		name  string
		yaml  string
		check func(Config) any // returns the value under test
		want  any
	}{
		{"plain", "llm: {api_key: \"${TOKEN}\"}", func(c Config) any { return c.LLM.APIKey.Reveal() }, "123:abc # not a comment: really"},
		{"block plain", "llm:\n  api_key: ${TOKEN}", func(c Config) any { return c.LLM.APIKey.Reveal() }, "123:abc # not a comment: really"},
		{"token", "telegram:\n  token: ${BOT_TOKEN}", func(c Config) any { return c.Telegram.Token.Reveal() }, fakeToken},
		{"inside text", "llm: {fast_model: \"m-${CTX}-x\"}", func(c Config) any { return c.LLM.FastModel }, "m-7000-x"},
		{"default when unset", "llm: {fast_model: \"${NOPE:-llama3}\"}", func(c Config) any { return c.LLM.FastModel }, "llama3"},
		{"default when empty", "llm: {fast_model: \"${EMPTY:-llama3}\"}", func(c Config) any { return c.LLM.FastModel }, "llama3"},
		{"default unused when set", "telegram:\n  mode: ${MODE:-polling}\n  webhook: {secret_token: abc}", func(c Config) any { return c.Telegram.Mode }, "webhook"},
		{"missing plain keeps default", "llm:\n  base_url: ${NOPE}", func(c Config) any { return c.LLM.BaseURL }, "https://api.openai.com/v1"},
		{"missing quoted is empty", "persona:\n  description: \"${NOPE}\"", func(c Config) any { return c.Persona.Description }, ""},
		{"integer", "llm:\n  context_tokens: ${CTX}", func(c Config) any { return c.LLM.ContextTokens }, 7000},
		{"list entry", "telegram:\n  allowed_users: [${OWNER}, 7]", func(c Config) any { return c.Telegram.AllowedUsers }, []int64{42, 7}},
		{"escaped", "persona:\n  name: \"$${TOKEN} costs $5\"", func(c Config) any { return c.Persona.Name }, "${TOKEN} costs $5"},
		{"alias expanded once", "persona:\n  name: &n \"${CTX}-$${X}\"\n  apology: *n", func(c Config) any { return c.Persona.Apology }, "7000-${X}"},
		{"flow mapping unquoted", "telegram: {mode: webhook, webhook: {secret_token: ${SECRET:-abc}}}", func(c Config) any { return c.Telegram.Webhook.SecretToken.Reveal() }, "abc_DEF-1"},
		{"hash in default", "llm:\n  fast_model: ${NOPE:-a#b} # comment", func(c Config) any { return c.LLM.FastModel }, "a#b"},
		{"placeholder text kept", "persona:\n  name: animaenv0z ${CTX}", func(c Config) any { return c.Persona.Name }, "animaenv0z 7000"},
		{"comments untouched", "# ${1BAD\nlog: {level: debug}", func(c Config) any { return c.Log.Level }, "debug"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse([]byte(tc.yaml), env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.check(cfg)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigEnvExpansionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"unterminated", "telegram:\n  token: ${TOKEN", `line 2: telegram.token: unterminated "${TOKEN": want ${NAME} or ${NAME:-default}`},
		{"bad name", "llm:\n  api_key: \"${1KEY}\"", `line 2: llm.api_key: bad variable reference "${1KEY}"`},
		{"empty name", "llm:\n  api_key: \"${}\"", `line 2: llm.api_key: bad variable reference "${}"`},
		{"expanded int is not an int", "llm:\n  context_tokens: ${X:-lots}", `line 2: llm.context_tokens: want an integer, got "lots"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.yaml), noEnv)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want prefix %s", err, tc.want)
			}
		})
	}
}

func TestConfigLoadExpandsFromEnvironment(t *testing.T) {
	t.Setenv("ANIMA_TEST_MODEL", "qwen2.5")
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("llm:\n  smart_model: ${ANIMA_TEST_MODEL}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.SmartModel != "qwen2.5" {
		t.Errorf("llm.smart_model = %q, want qwen2.5", cfg.LLM.SmartModel)
	}
}

func TestConfigDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string // each error's text, in order
	}{
		{"unknown key with suggestion", "llm:\n  fast_model: a\n  fast_modle: b",
			[]string{`line 3: llm.fast_modle: unknown key; did you mean "fast_model"?`}},
		{"unknown key lists known ones", "storage:\n  driver: bolt",
			[]string{`line 2: storage.driver: unknown key; storage accepts path, compact_interval, dead_letters`}},
		{"unknown section", "telgram:\n  token: x",
			[]string{`line 1: telgram: unknown key; did you mean "telegram"?`}},
		{"unknown nested key", "telegram:\n  webhook:\n    secret: x",
			[]string{`line 3: telegram.webhook.secret: unknown key; telegram.webhook accepts listen, path, public_url, secret_token`}},
		{"several at once", "llm:\n  fast_modle: b\nlogs: {}\nlog: {levle: info}",
			[]string{
				`line 2: llm.fast_modle: unknown key; did you mean "fast_model"?`,
				`line 3: logs: unknown key; did you mean "log"?`,
				`line 4: log.levle: unknown key; did you mean "level"?`,
			}},
		{"duplicate key", "log:\n  level: info\n  level: debug",
			[]string{`line 3: log.level: set twice (first at line 2)`}},
		{"key not a plain name", "log:\n  ? [level]\n  : info",
			[]string{`line 2: log: keys must be plain names; allowed keys: level, format, message_text, replies`}},
		{"entry name not a plain name", "mcp:\n  servers:\n    ? [a]\n    : {}",
			[]string{`line 3: mcp.servers: keys must be plain names`}},
		{"entry named twice", "mcp:\n  servers:\n    a: {command: [x]}\n    a: {command: [y]}",
			[]string{`line 4: mcp.servers.a: set twice (first at line 3)`}},
		{"section not a mapping", "llm: 5",
			[]string{`line 1: llm: want a mapping with the keys base_url, api_key, fast_model, smart_model, request_timeout, confidence_threshold, daily_token_budget, daily_user_token_budget, context_tokens, tool_share, max_output_tokens, transcription_model, max_audio, vision, speech_model, speech_timeout, answer_format, embedding_model`}},
		{"document not a mapping", "- telegram",
			[]string{`line 1: want a mapping with the keys telegram, llm, storage, metrics, proactive, user, persona, brain, limits, voice, log, plugins, mcp`}},
		{"wrong type int", "llm:\n  context_tokens: lots",
			[]string{`line 2: llm.context_tokens: want an integer, got "lots"`}},
		{"wrong type bool", "proactive:\n  enabled: sometimes",
			[]string{`line 2: proactive.enabled: want true or false, got "sometimes"`}},
		{"wrong type string", "log:\n  level: [info]",
			[]string{`line 2: log.level: want a string, got a list`}},
		{"bad list entry", "telegram:\n  allowed_users:\n    - 1\n    - bob",
			[]string{`line 4: telegram.allowed_users: want an integer, got "bob"`}},
		{"validation error gets its line", "\nllm:\n  context_tokens: 100",
			[]string{`line 3: llm.context_tokens: must be at least 500; got 100`}},
		{"second document", "log: {level: info}\n---\nlog: {level: debug}",
			[]string{`line 2: a second YAML document; keep the whole configuration in one`}},
		{"merge key with unknown key", "x: &base {level: info, colour: true}\nlog:\n  <<: *base",
			[]string{`line 1: x: unknown key; the sections are telegram, llm, storage, metrics, proactive, user, persona, brain, limits, voice, log, plugins, mcp`,
				`line 1: log.colour: unknown key; log accepts level, format, message_text, replies`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.yaml), noEnv)
			var got []string
			for _, e := range keyErrors(t, err) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigParseEdgeCases(t *testing.T) {
	t.Parallel()
	t.Run("syntax error", func(t *testing.T) {
		_, err := parse([]byte("llm: [unclosed"), noEnv)
		if err == nil || !strings.Contains(err.Error(), "parse YAML") {
			t.Errorf("error = %v, want a parse YAML error", err)
		}
	})
	for _, empty := range []string{"", "# only a comment\n", "---\n", "~\n"} {
		t.Run(fmt.Sprintf("empty %q", empty), func(t *testing.T) {
			cfg, err := parse([]byte(empty), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Default(), cfg); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("merge key", func(t *testing.T) {
		in := "persona:\n  <<: {name: Base, apology: sorry}\n  name: Nova\n"
		cfg, err := parse([]byte(in), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]string{cfg.Persona.Name, cfg.Persona.Apology}; got != [2]string{"Nova", "sorry"} {
			t.Errorf("persona = %q, want [Nova sorry]", got)
		}
	})
	t.Run("null section keeps defaults", func(t *testing.T) {
		cfg, err := parse([]byte("llm:\nlog: {level: warn}"), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.LLM.FastModel != "gpt-4o-mini" || cfg.Log.Level != "warn" {
			t.Errorf("llm.fast_model = %q, log.level = %q", cfg.LLM.FastModel, cfg.Log.Level)
		}
	})
}

func TestConfigValidateNamesKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key    string
		mutate func(*Config)
		want   string // part of the message saying what is allowed
	}{
		{"telegram.api_url", func(c *Config) { c.Telegram.APIURL = "ftp://example.com" }, "http:// or https:// URL"},
		{"telegram.api_url", func(c *Config) { c.Telegram.APIURL = "api.telegram.org" }, "http:// or https:// URL"},
		{"telegram.mode", func(c *Config) { c.Telegram.Mode = "push" }, `one of polling, webhook; got "push"`},
		{"telegram.webhook.listen", func(c *Config) { c.Telegram.Webhook.Listen = "8443" }, "host:port"},
		{"telegram.webhook.listen", func(c *Config) { c.Telegram.Webhook.Listen = "localhost:https" }, "host:port"},
		{"telegram.webhook.path", func(c *Config) { c.Telegram.Webhook.Path = "telegram" }, `start with "/"`},
		// The path becomes a ServeMux pattern: wildcards or spaces would make the channel panic.
		{"telegram.webhook.path", func(c *Config) { webhook(c, ":0", "s"); c.Telegram.Webhook.Path = "/hook/{id" }, "spaces or braces"},
		{"telegram.webhook.path", func(c *Config) { webhook(c, ":0", "s"); c.Telegram.Webhook.Path = "/hook me" }, "spaces or braces"},
		{"telegram.webhook.listen", func(c *Config) { webhook(c, "", "s") }, "host:port"},
		{"telegram.webhook.public_url", func(c *Config) { c.Telegram.Webhook.PublicURL = "http://bot.example.com" }, "https:// URL"},
		{"telegram.webhook.secret_token", func(c *Config) { c.Telegram.Mode = ModeWebhook }, "set ANIMA_WEBHOOK_SECRET"},
		{"telegram.webhook.secret_token", func(c *Config) {
			c.Telegram.Mode = ModeWebhook
			c.Telegram.Webhook.SecretToken = "has space"
		}, "1–256 characters of A-Z a-z 0-9 _ -"},
		{"telegram.webhook.secret_token", func(c *Config) {
			c.Telegram.Mode = ModeWebhook
			c.Telegram.Webhook.SecretToken = Secret(strings.Repeat("a", 257))
		}, "1–256 characters"},
		{"telegram.webhook.secret_token", func(c *Config) { webhook(c, ":0", "a b") }, "1–256 characters of A-Z a-z 0-9 _ -"},
		{"telegram.webhook.secret_token", func(c *Config) { webhook(c, ":0", "") }, "set ANIMA_WEBHOOK_SECRET"},
		{"telegram.mode", func(c *Config) { c.Telegram.Mode = "carrier-pigeon" }, "one of polling, webhook"},
		{"telegram.token", func(c *Config) { c.Telegram.Token = "1:x" }, "does not look like a Bot API token"},
		{"telegram.allowed_users", func(c *Config) { c.Telegram.AllowedUsers = []int64{1, -100} }, "positive"},
		{"llm.base_url", func(c *Config) { c.LLM.BaseURL = "localhost:11434" }, "http:// or https:// URL"},
		{"llm.fast_model", func(c *Config) { c.LLM.FastModel = "" }, "must not be empty"},
		{"llm.smart_model", func(c *Config) { c.LLM.SmartModel = " " }, "must not be empty"},
		{"llm.request_timeout", func(c *Config) { c.LLM.RequestTimeout = 0 }, "greater than 0"},
		{"llm.speech_timeout", func(c *Config) { c.LLM.SpeechTimeout = 0 }, "greater than 0"},
		{"llm.confidence_threshold", func(c *Config) { c.LLM.ConfidenceThreshold = 1.5 }, "between 0 and 1"},
		{"llm.confidence_threshold", func(c *Config) { c.LLM.ConfidenceThreshold = math.NaN() }, "between 0 and 1"},
		{"llm.daily_token_budget", func(c *Config) { c.LLM.DailyTokenBudget = -1 }, "0 (unlimited) or more"},
		{"llm.daily_user_token_budget", func(c *Config) { c.LLM.DailyUserTokenBudget = -1 }, "0 (no per-user share) or more"},
		{"llm.context_tokens", func(c *Config) { c.LLM.ContextTokens = 499 }, "at least 500"},
		{"llm.tool_share", func(c *Config) { c.LLM.ToolShare = 0 }, "greater than 0 and at most 0.5"},
		{"llm.tool_share", func(c *Config) { c.LLM.ToolShare = 0.6 }, "greater than 0 and at most 0.5"},
		{"llm.tool_share", func(c *Config) { c.LLM.ToolShare = math.NaN() }, "greater than 0 and at most 0.5"},
		{"limits.pending_reminders_per_chat", func(c *Config) { c.Limits.PendingRemindersPerChat = 0 }, "at least 1"},
		{"limits.reminders_per_run", func(c *Config) { c.Limits.RemindersPerRun = 0 }, "at least 1"},
		{"limits.user_runs_per_minute", func(c *Config) { c.Limits.UserRunsPerMinute = -1 }, "0 (no limit) or more"},
		{"limits.audio_per_user_per_day", func(c *Config) { c.Limits.AudioPerUserPerDay = Duration(-time.Minute) }, "0 (no cap) or more"},
		{"llm.max_output_tokens", func(c *Config) { c.LLM.MaxOutputTokens = 0 }, "greater than 0"},
		{"limits.speech_per_user_per_day", func(c *Config) { c.Limits.SpeechPerUserPerDay = Duration(-time.Minute) }, "0 (no cap) or more"},
		{"voice.reply", func(c *Config) { c.Voice.Reply = "sometimes" }, "auto, off, mirror or always"},
		{"voice.reply", func(c *Config) { c.Voice.Reply = VoiceReplyMirror }, "llm.speech_model is empty"},
		{"voice.name", func(c *Config) { c.LLM.SpeechModel, c.Voice.Name = "gpt-4o-mini-tts", "" }, "must not be empty"},
		{"voice.max_length", func(c *Config) { c.Voice.MaxLength = 0 }, "greater than 0"},
		{"storage.path", func(c *Config) { c.Storage.Path = "" }, "must not be empty"},
		{"metrics.listen", func(c *Config) { c.Metrics.Listen = "localhost" }, `host:port such as 127.0.0.1:9464 (or "" to disable)`},
		{"proactive.min_silence", func(c *Config) { c.Proactive.MinSilence = 0 }, "greater than 0"},
		{"proactive.cooldown", func(c *Config) { c.Proactive.Cooldown = 0 }, "greater than 0"},
		{"proactive.followup_after", func(c *Config) { c.Proactive.FollowupAfter = 0 }, "greater than 0"},
		{"proactive.max_per_day", func(c *Config) { c.Proactive.MaxPerDay = -1 }, "0 or more"},
		{"proactive.jitter", func(c *Config) { c.Proactive.Jitter = Duration(7 * time.Hour) }, "between 0 (exact thresholds) and 6h"},
		{"user.timezone", func(c *Config) { c.User.Timezone = "Mars/Olympus_Mons" }, "IANA name such as Europe/Berlin"},
		{"persona.name", func(c *Config) { c.Persona.Name = "" }, "must not be empty"},
		{"persona.apology", func(c *Config) { c.Persona.Apology = "" }, "must not be empty"},
		{"persona.interests", func(c *Config) { c.Persona.Interests = slices.Repeat([]string{"birds"}, 11) }, "at most 10 interests; got 11"},
		{"persona.interests", func(c *Config) { c.Persona.Interests = []string{"birds", "  "} }, "item 2 is empty"},
		{"persona.interests", func(c *Config) { c.Persona.Interests = []string{strings.Repeat("é", 81)} }, "item 1 is 81 characters long; at most 80"},
		{"brain.tick", func(c *Config) { c.Brain.Tick = Duration(5 * time.Millisecond) }, "between 10ms and 1m"},
		{"brain.tick", func(c *Config) { c.Brain.Tick = Duration(2 * time.Minute) }, "between 10ms and 1m"},
		{"llm.answer_format", func(c *Config) { c.LLM.AnswerFormat = "json" }, "one of auto, json_schema, text"},
		{"log.level", func(c *Config) { c.Log.Level = "verbose" }, "one of debug, info, warn, error"},
		{"log.format", func(c *Config) { c.Log.Format = "xml" }, "one of text, json"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			cfg := Default()
			tc.mutate(&cfg)
			errs := keyErrors(t, cfg.Validate())
			if len(errs) != 1 {
				t.Fatalf("Validate() = %v, want one error for %s", errs, tc.key)
			}
			msg := errs[0].Error()
			if errs[0].Key != tc.key || !strings.HasPrefix(msg, tc.key+": ") || !strings.Contains(msg, tc.want) {
				t.Errorf("Validate() = %q, want %s: …%s…", msg, tc.key, tc.want)
			}
		})
	}
}

func TestConfigValidateJoinsAllProblems(t *testing.T) {
	t.Parallel()
	cfg := Default()
	cfg.Telegram.Mode = "push"
	cfg.LLM.ContextTokens = 1
	cfg.Log.Format = "xml"
	var keys []string
	for _, e := range keyErrors(t, cfg.Validate()) {
		keys = append(keys, e.Key)
	}
	if diff := cmp.Diff([]string{"telegram.mode", "llm.context_tokens", "log.format"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestConfigValidAlternatives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"webhook mode", func(c *Config) {
			c.Telegram.Mode = ModeWebhook
			c.Telegram.Webhook.SecretToken = Secret(strings.Repeat("aZ9_-", 51) + "x")
			c.Telegram.Webhook.PublicURL = "https://bot.example.com/telegram"
		}},
		{"local endpoints", func(c *Config) {
			c.Telegram.APIURL = "http://127.0.0.1:8081"
			c.LLM.BaseURL = "http://localhost:11434/v1"
		}},
		{"metrics disabled", func(c *Config) { c.Metrics.Listen = "" }},
		{"listen on all interfaces", func(c *Config) { c.Metrics.Listen = ":9464"; c.Telegram.Webhook.Listen = "[::]:0" }},
		{"no quiet hours", func(c *Config) { c.Proactive.QuietHours = brain.QuietHours{} }},
		{"token", func(c *Config) { c.Telegram.Token = fakeToken }},
		{"edges", func(c *Config) {
			c.LLM.ConfidenceThreshold = 0
			c.LLM.ContextTokens = 500
			c.Proactive.MaxPerDay = 0
			c.Brain.Tick = Duration(10 * time.Millisecond)
		}},
		{"tick 1m", func(c *Config) { c.Brain.Tick = Duration(time.Minute); c.LLM.ConfidenceThreshold = 1 }},
		{"timezone", func(c *Config) { c.User.Timezone = "America/Argentina/Buenos_Aires" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			tc.mutate(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
}

func TestConfigTimezone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tz    string
		valid bool
	}{
		{"UTC", true},
		{"Europe/Berlin", true},
		{"Asia/Kolkata", true},
		{"Europe/Berlinn", false},
		{"", false},
		{"Local", false},
		{"../../etc/passwd", false},
		{"+03:00", false},
	}
	for _, tc := range tests {
		t.Run(tc.tz, func(t *testing.T) {
			cfg := Default()
			cfg.User.Timezone = tc.tz
			err := cfg.Validate()
			if tc.valid != (err == nil) {
				t.Fatalf("Validate() = %v, want valid=%v", err, tc.valid)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "user.timezone: ") {
				t.Errorf("Validate() = %v, want it to name user.timezone", err)
			}
			if tc.valid {
				loc, err := cfg.User.Location()
				if err != nil || loc.String() != tc.tz {
					t.Errorf("Location() = %v, %v", loc, err)
				}
			}
		})
	}
}

func TestConfigDurations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"1s", time.Second, ""},
		{"250ms", 250 * time.Millisecond, ""},
		{"1m", time.Minute, ""},
		{`"45s"`, 45 * time.Second, ""},
		{"-1s", 0, `line 2: brain.tick: invalid duration "-1s": must not be negative`},
		{"60", 0, `line 2: brain.tick: invalid duration "60": want a Go duration such as "90s", "20m" or "6h"`},
		{"1 day", 0, `line 2: brain.tick: invalid duration "1 day"`},
		{"1d", 0, `line 2: brain.tick: invalid duration "1d"`},
		{`""`, 0, `line 2: brain.tick: invalid duration ""`},
		{"[1s]", 0, `line 2: brain.tick: want a duration such as "90s", "20m" or "6h"`},
		{"0s", 0, `line 2: brain.tick: must be between 10ms and 1m; got 0s`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			cfg, err := parse([]byte("brain:\n  tick: "+tc.in+"\n"), noEnv)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want prefix %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Brain.Tick.Std() != tc.want {
				t.Errorf("brain.tick = %v, want %v", cfg.Brain.Tick, tc.want)
			}
		})
	}
}

// TestConfigQuietHours: proactive.quiet_hours decodes into brain.QuietHours (whose own
// tests cover Contains and NextEnd).
func TestConfigQuietHours(t *testing.T) {
	t.Parallel()
	h := func(s string) time.Duration { d, _ := time.ParseDuration(s); return d }
	tests := []struct {
		yaml       string
		start, end time.Duration
		ok         bool
	}{
		{`"22:30-08:30"`, h("22h30m"), h("8h30m"), true},
		{`09:00-17:00`, h("9h"), h("17h"), true},
		{`"22:00-00:00"`, h("22h"), 0, true},
		{`"00:00-06:00"`, 0, h("6h"), true},
		{`""`, 0, 0, false},
		{`~`, h("22h30m"), h("8h30m"), true}, // null keeps the default
		{`"${NOPE}"`, 0, 0, false},           // quoted: an empty value
		{`${NOPE}`, h("22h30m"), h("8h30m"), true},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			cfg, err := parse([]byte("proactive:\n  quiet_hours: "+tc.yaml+"\n"), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			start, end, ok := cfg.Proactive.QuietHours.Offsets()
			if start != tc.start || end != tc.end || ok != tc.ok {
				t.Errorf("Offsets() = %v, %v, %v; want %v, %v, %v", start, end, ok, tc.start, tc.end, tc.ok)
			}
			if got := cfg.Proactive.Policy().QuietHours; !got.Equal(cfg.Proactive.QuietHours) {
				t.Errorf("Policy().QuietHours = %v", got)
			}
		})
	}
}

// TestConfigQuietHoursInvalid: a malformed window is an error naming proactive.quiet_hours
// and its line, saying what is allowed.
func TestConfigQuietHoursInvalid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"22:30", "2230-0830", "24:00-01:00", "22:60-01:00", "7:00-9:00", "07:00-09:0",
		"aa:bb-cc:dd", "22:30-08:30-09:00", "22:30 - 08:30", "+1:00-02:00", "08:00-08:00", "-",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := parse([]byte("proactive:\n  quiet_hours: \""+in+"\"\n"), noEnv)
			errs := keyErrors(t, err)
			if len(errs) != 1 || errs[0].Key != "proactive.quiet_hours" || errs[0].Line != 2 {
				t.Fatalf("parse = %v, want one proactive.quiet_hours error on line 2", err)
			}
			msg := errs[0].Error()
			if !strings.HasPrefix(msg, "line 2: proactive.quiet_hours: ") ||
				!strings.Contains(msg, `"HH:MM-HH:MM"`) && !strings.Contains(msg, `use "" for no quiet hours`) {
				t.Errorf("error %q, want it to name the key and say what is allowed", msg)
			}
		})
	}
	for _, in := range []string{"[22:30-08:30]", "{from: 22:30, to: 08:30}", "{}"} {
		t.Run(in, func(t *testing.T) {
			_, err := parse([]byte("proactive:\n  quiet_hours: "+in+"\n"), noEnv)
			want := `line 2: proactive.quiet_hours: want a time range "HH:MM-HH:MM" or ""`
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("parse = %v, want %s", err, want)
			}
		})
	}
}

// TestConfigProactivePolicy: the proactive section converts to the brain's policy, and
// the defaults agree with the brain's documented ones.
func TestConfigProactivePolicy(t *testing.T) {
	t.Parallel()
	def := brain.DefaultProactivePolicy()
	def.Jitter = time.Hour // the brain's default is exact; the configuration's spreads the timing
	if diff := cmp.Diff(def, Default().Proactive.Policy()); diff != "" {
		t.Errorf("Default().Proactive.Policy() (-brain +config):\n%s", diff)
	}
	cfg, err := parse([]byte("proactive: {enabled: false, min_silence: 1h, cooldown: 2h, followup_after: 5m, quiet_hours: \"23:00-07:15\", max_per_day: 5}"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := brain.ParseQuietHours("23:00-07:15")
	want := brain.ProactivePolicy{MinSilence: time.Hour, Cooldown: 2 * time.Hour, FollowupAfter: 5 * time.Minute, QuietHours: q, MaxPerDay: 5, Jitter: time.Hour}
	if diff := cmp.Diff(want, cfg.Proactive.Policy()); diff != "" {
		t.Errorf("Policy() (-want +got):\n%s", diff)
	}
}

// TestConfigToken: telegram.token, when set, has Telegram's shape; whitespace (a trailing
// newline from a secret file) is its own error; no error ever shows the token.
func TestConfigToken(t *testing.T) {
	t.Parallel()
	const key = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	tests := []struct {
		name, token string
		want        string // "" for valid
	}{
		{"valid", "110201543:" + key, ""},
		{"valid, 30 characters", "7:" + key[:30], ""},
		{"trailing newline", "110201543:" + key + "\n", "contains whitespace"},
		{"trailing CRLF", "110201543:" + key + "\r\n", "contains whitespace"},
		{"leading space", " 110201543:" + key, "contains whitespace"},
		{"inner tab", "110201543:" + key[:10] + "\t" + key[10:], "contains whitespace"},
		{"no colon", "110201543" + key, "does not look like a Bot API token"},
		{"short", "110201543:" + key[:29], "does not look like a Bot API token"},
		{"letters in the id", "bot110201543:" + key, "does not look like a Bot API token"},
		{"no id", ":" + key, "does not look like a Bot API token"},
		{"other characters", "110201543:" + key[:20] + "+/=" + key[20:], "does not look like a Bot API token"},
		{"two colons", "110201543:" + key + ":x", "does not look like a Bot API token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.Telegram.Token, cfg.Telegram.AllowedUsers = Secret(tc.token), []int64{1}
			cfg.LLM.APIKey = "sk-test" // the default endpoint is remote
			for _, err := range []error{cfg.Validate(), cfg.ValidateRun()} {
				if tc.want == "" {
					if err != nil {
						t.Fatalf("valid token rejected: %v", err)
					}
					continue
				}
				errs := keyErrors(t, err)
				if len(errs) != 1 || errs[0].Key != "telegram.token" || !strings.Contains(errs[0].Msg, tc.want) {
					t.Fatalf("error %v, want one telegram.token error saying %q", err, tc.want)
				}
				assertNoToken(t, err.Error(), tc.token)
			}
			if tc.want == "" {
				return
			}
			// Through the file and the environment, as a secret file would set it.
			_, err := parse([]byte("telegram:\n  token: ${T}\n"), envMap(map[string]string{"T": tc.token}))
			if err == nil || !strings.HasPrefix(err.Error(), "line 2: telegram.token: ") {
				t.Fatalf("parse = %v, want a telegram.token error on line 2", err)
			}
			assertNoToken(t, err.Error(), tc.token)
		})
	}
}

// assertNoToken fails if msg shows any part of token longer than 5 characters.
func assertNoToken(t *testing.T, msg, token string) {
	t.Helper()
	for _, part := range strings.FieldsFunc(token, func(r rune) bool { return r == ':' || unicode.IsSpace(r) }) {
		for i := 0; i+6 <= len(part); i++ {
			if strings.Contains(msg, part[i:i+6]) {
				t.Fatalf("error %q shows part of the token (%q)", msg, part[i:i+6])
			}
		}
	}
}

func TestConfigValidateRun(t *testing.T) {
	t.Parallel()
	const (
		tokenMsg = "telegram.token: is empty: set ANIMA_TELEGRAM_TOKEN or telegram.token"
		usersMsg = "telegram.allowed_users: is empty: list the Telegram user ids allowed to talk to anima, or set telegram.public: true"
	)
	tests := []struct {
		name   string
		token  Secret
		users  []int64
		public bool
		want   []string
	}{
		{"nothing set", "", nil, false, []string{tokenMsg, usersMsg}},
		{"no token", "", []int64{1}, false, []string{tokenMsg}},
		{"no users", fakeToken, nil, false, []string{usersMsg}},
		{"public", fakeToken, nil, true, nil},
		{"ready", fakeToken, []int64{1}, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.Telegram.Token, cfg.Telegram.AllowedUsers, cfg.Telegram.Public = tc.token, tc.users, tc.public
			cfg.LLM.APIKey = "sk-test" // the default endpoint is remote; TestConfigAPIKey covers the key
			var got []string
			for _, e := range keyErrors(t, cfg.ValidateRun()) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateRun (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("includes Validate", func(t *testing.T) {
		cfg := Default()
		cfg.Telegram.Token, cfg.Telegram.Public = fakeToken, true
		cfg.Log.Level = "loud"
		if err := cfg.ValidateRun(); err == nil || !strings.HasPrefix(err.Error(), "log.level: ") {
			t.Errorf("ValidateRun() = %v, want the log.level error", err)
		}
	})
}

func TestConfigSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	cfg := Default()
	cfg.Telegram.Token = "123456:TOKEN-SECRET"
	cfg.LLM.APIKey = "sk-APIKEY-SECRET"
	cfg.Telegram.Webhook.SecretToken = "WEBHOOK-SECRET"

	var js, txt bytes.Buffer
	slog.New(slog.NewJSONHandler(&js, nil)).Info("config", "config", cfg, "token", cfg.Telegram.Token)
	slog.New(slog.NewTextHandler(&txt, nil)).Info("config", "config", cfg, "telegram", cfg.Telegram)
	marshalled, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"Redacted":  cfg.Redacted(),
		"%v":        fmt.Sprintf("%v", cfg),
		"%+v":       fmt.Sprintf("%+v", cfg),
		"%#v":       fmt.Sprintf("%#v", cfg),
		"%s":        fmt.Sprintf("%s", cfg.LLM.APIKey),
		"%v llm":    fmt.Sprintf("%v", cfg.LLM),
		"%q":        fmt.Sprintf("%q", cfg.LLM.APIKey),
		"%x":        fmt.Sprintf("%x", cfg.LLM.APIKey),
		"%d":        fmt.Sprintf("%d", cfg.Telegram.Token),
		"slog json": js.String(),
		"slog text": txt.String(),
		"json":      string(marshalled),
	}
	for name, out := range outputs {
		for _, secret := range []string{"TOKEN-SECRET", "APIKEY-SECRET", "WEBHOOK-SECRET"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s output contains %s:\n%s", name, secret, out)
			}
		}
	}

	red := cfg.Redacted()
	for _, want := range []string{"token: '[redacted]'", "api_key: '[redacted]'", "secret_token: '[redacted]'", "fast_model: gpt-4o-mini", "tick: 1s", "min_silence: 6h0m0s"} {
		if !strings.Contains(red, want) {
			t.Errorf("Redacted() lacks %q:\n%s", want, red)
		}
	}
	if got := Default().Redacted(); !strings.Contains(got, `token: ""`) {
		t.Errorf("Redacted() of an unset token should show it empty:\n%s", got)
	}
}

func TestConfigLogLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError, "bogus": slog.LevelInfo} {
		if got := (LogConfig{Level: in}).SlogLevel(); got != want {
			t.Errorf("SlogLevel(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestConfigExpandEnv(t *testing.T) {
	t.Parallel()
	env := envMap(map[string]string{"A": "x", "E": ""})
	tests := []struct{ in, want, wantErr string }{
		{"${A}", "x", ""},
		{"${A}${A}", "xx", ""},
		{"pre ${A} post", "pre x post", ""},
		{"${B}", "", ""},
		{"${E:-d}", "d", ""},
		{"${B:-d e f}", "d e f", ""},
		{"${A:-d}", "x", ""},
		{"${B:-}", "", ""},
		{"$A $ $$ $${A}", "$A $ $$ ${A}", ""},
		{"$$${A}", "$${A}", ""},
		{"${A", "", "unterminated"},
		{"${A-b}", "", "bad variable reference"},
		{"${ A}", "", "bad variable reference"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := expandEnv(tc.in, env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("expandEnv(%q) = %q, %v; want error %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("expandEnv(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// webhook sets webhook mode with the given listen address and secret token.
func webhook(c *Config, listen, secret string) {
	c.Telegram.Mode = ModeWebhook
	c.Telegram.Webhook.Listen, c.Telegram.Webhook.SecretToken = listen, Secret(secret)
}

// TestPluginSectionIsStrict: a plugin's section is decoded as strictly as the rest; the
// error names the key, and so the plugin.
func TestPluginSectionIsStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"plugins:\n  innerlife:\n    dream_att: \"04:00\"\n", "plugins.innerlife.dream_att: unknown key"},
		{"plugins:\n  innerlife:\n    dream_at: \"4am\"\n", "plugins.innerlife.dream_at"},
		{"plugins:\n  innerlife:\n    dream_min_quiet: soon\n", "plugins.innerlife.dream_min_quiet"},
		{"plugins:\n  innerlife:\n    journal_per_day: 0\n", "plugins.innerlife.journal_per_day: must be at least 1"},
		{"plugins:\n  nosuch: {}\n", "plugins.nosuch: unknown key"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil {
			var c Config
			c, err = Parse([]byte(tc.yaml))
			if err == nil {
				err = c.Validate()
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to name %s", tc.yaml, err, tc.want)
		}
	}
}

// TestCompactIntervalValidated: storage.compact_interval defaults to 10 minutes and must
// be a positive duration.
func TestCompactIntervalValidated(t *testing.T) {
	t.Parallel()
	if got := Default().Storage.CompactInterval; got.Std() != 10*time.Minute {
		t.Errorf("default storage.compact_interval = %v, want 10m", got)
	}
	c := Default()
	c.Storage.CompactInterval = 0
	var found bool
	for _, e := range c.validate() {
		found = found || e.Key == "storage.compact_interval"
	}
	if !found {
		t.Error("storage.compact_interval: 0 was accepted")
	}
}

// TestDeadLetterCapsValidated: storage.dead_letters.per_user and per_chat default to 50
// and must be 1 to 10000; Validate names the bad key.
func TestDeadLetterCapsValidated(t *testing.T) {
	t.Parallel()
	if got := Default().Storage.DeadLetters; got.PerUser != 50 || got.PerChat != 50 {
		t.Errorf("default storage.dead_letters = %+v, want 50 per user and per chat", got)
	}
	for _, tc := range []struct {
		name             string
		perUser, perChat int
		want             []string
	}{
		{"defaults", 50, 50, nil},
		{"bounds", 1, 10000, nil},
		{"zero per user", 0, 50, []string{"storage.dead_letters.per_user"}},
		{"both out", -1, 10001, []string{"storage.dead_letters.per_chat", "storage.dead_letters.per_user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.Storage.DeadLetters = DeadLettersConfig{PerUser: tc.perUser, PerChat: tc.perChat}
			var got []string
			for _, e := range c.validate() {
				if strings.HasPrefix(e.Key, "storage.dead_letters") {
					got = append(got, e.Key)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("keys refused %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVoiceMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply, model string
		want         brain.VoiceMode
	}{
		{VoiceReplyAuto, "", brain.VoiceOff},
		{VoiceReplyAuto, "gpt-4o-mini-tts", brain.VoiceMirror},
		{VoiceReplyOff, "gpt-4o-mini-tts", brain.VoiceOff},
		{VoiceReplyAlways, "gpt-4o-mini-tts", brain.VoiceAlways},
	} {
		c := Default()
		c.Voice.Reply, c.LLM.SpeechModel = tc.reply, tc.model
		if got := c.VoiceMode(); got != tc.want {
			t.Errorf("voice.reply %s, llm.speech_model %q: VoiceMode = %s, want %s", tc.reply, tc.model, got, tc.want)
		}
	}
}

// TestSuggestZones: "Berlin" as user.timezone got no "did you mean Europe/Berlin?"
// (issue 26). The last element of the name is matched against the tz database's names,
// case-insensitively.
func TestSuggestZones(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"Berlin", []string{"Europe/Berlin"}},
		{"berlin", []string{"Europe/Berlin"}},
		{"Europa/BERLIN", []string{"Europe/Berlin"}},
		{"new york", []string{"America/New_York"}},
		{"salta", []string{"America/Argentina/Salta"}},
		{"utc", []string{"UTC"}},
		{"Olympus", nil},
		{"", nil},
		{"../etc/passwd", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SuggestZones(tc.name); !slices.Equal(got, tc.want) {
				t.Errorf("SuggestZones(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
	_, err := parse([]byte("user: {timezone: Berlin}\n"), noEnv)
	if err == nil || !strings.Contains(err.Error(), `line 1: user.timezone: unknown time zone "Berlin": use an IANA name such as Europe/Berlin or UTC. Did you mean Europe/Berlin?`) {
		t.Errorf("user.timezone: Berlin: %v, want a did-you-mean Europe/Berlin", err)
	}
}

// TestConfigStreamReplies: telegram.stream_replies is on unless the file turns it off.
func TestConfigStreamReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       bool
	}{
		{"default", "telegram: {mode: polling}\n", true},
		{"off", "telegram: {stream_replies: false}\n", false},
		{"on", "telegram: {stream_replies: true}\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Telegram.StreamReplies != tc.want {
				t.Errorf("stream_replies = %v, want %v", cfg.Telegram.StreamReplies, tc.want)
			}
		})
	}
	if _, err := Parse([]byte("telegram: {stream_replies: maybe}\n")); err == nil {
		t.Error("stream_replies: maybe was accepted")
	}
}

func TestConfigAPIKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		baseURL string
		key     Secret
		want    string // in the llm.api_key error; "" for none
	}{
		{"remote without a key", "https://api.openai.com/v1", "", "points at api.openai.com, which is not on this machine"},
		{"remote with a key", "https://api.openai.com/v1", "sk-test", ""},
		{"LAN server without a key", "http://192.168.1.20:11434/v1", "", "points at 192.168.1.20"},
		{"localhost", "http://localhost:11434/v1", "", ""},
		{"LOCALHOST.", "http://LOCALHOST.:11434/v1", "", ""},
		{"name under .localhost", "http://ollama.localhost:11434/v1", "", ""},
		{"IPv4 loopback", "http://127.0.0.1:8080/v1", "", ""},
		{"other IPv4 loopback", "http://127.0.1.1:8080/v1", "", ""},
		{"IPv6 loopback", "http://[::1]:8080/v1", "", ""},
		{"localhost lookalike", "https://localhost.example.com/v1", "", "points at localhost.example.com"},
		{"malformed URL is base_url's problem", "::", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.Telegram.Token, cfg.Telegram.AllowedUsers = fakeToken, []int64{1}
			cfg.LLM.BaseURL, cfg.LLM.APIKey = tc.baseURL, tc.key
			for name, err := range map[string]error{"ValidateChat": cfg.ValidateChat(), "ValidateRun": cfg.ValidateRun()} {
				var got []*KeyError
				for _, e := range keyErrors(t, err) {
					if e.Key == "llm.api_key" {
						got = append(got, e)
					}
				}
				switch {
				case tc.want == "" && len(got) > 0:
					t.Errorf("%s: %v, want no llm.api_key error", name, got)
				case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Msg, tc.want) ||
					!strings.Contains(got[0].Msg, "ANIMA_LLM_API_KEY")):
					t.Errorf("%s: %v, want one llm.api_key error saying %q and naming ANIMA_LLM_API_KEY", name, err, tc.want)
				}
			}
			if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "llm.api_key") {
				t.Errorf("Validate() = %v: the key is not needed to check a configuration", err)
			}
		})
	}
}

// TestInspectReportsEveryProblemOnce: a file with an unknown key reported only that key,
// with a zero configuration (so `anima check` asked an endpoint at ""), and its values'
// problems only once the key was fixed (issue 36). Now the walk's problems and the values'
// come together, each once, none that follows from another (alowed_users leaves
// allowed_users empty; a refused value keeps its default), with the values decoded.
func TestInspectReportsEveryProblemOnce(t *testing.T) {
	t.Setenv("ANIMA_TELEGRAM_TOKEN", "")
	t.Setenv("ANIMA_LLM_API_KEY", "")
	for _, tc := range []struct {
		name, yaml string
		keys       []string
	}{
		{"typo, zone and port", "telegram:\n  token: " + fakeToken + "\n  alowed_users: [4242]\nllm: {base_url: 'http://127.0.0.1:9/v1', api_key: k}\n" +
			"user: {timezone: Europe/Berln}\nmetrics: {listen: '127.0.0.1:99999'}\n",
			[]string{"telegram.alowed_users", "user.timezone", "metrics.listen"}},
		{"wrong types and a key set twice", "telegram:\n  token: " + fakeToken + "\n  allowed_users: [4242, x]\nllm: {base_url: 'http://127.0.0.1:9/v1', api_key: k}\n" +
			"user: {quiet_hours: '25:00-01:00'}\nbrain: {tick: 1h}\nlog: {level: info, level: debug}\n",
			[]string{"telegram.allowed_users", "user.quiet_hours", "brain.tick", "log.level"}},
		{"a section of the wrong kind", "telegram: [1]\nllm: {base_url: 'http://127.0.0.1:9/v1', api_key: k}\nuser: {timezone: Mars/Olympus}\n",
			[]string{"telegram", "user.timezone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Inspect(path)
			var keys []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				ke, ok := errors.AsType[*KeyError](e)
				if !ok {
					t.Fatalf("%v is not a *KeyError", e)
				}
				keys = append(keys, ke.Key)
			}
			if diff := cmp.Diff(tc.keys, keys); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall:\n%v", diff, err)
			}
			if cfg.LLM.BaseURL != "http://127.0.0.1:9/v1" {
				t.Errorf("llm.base_url = %q, want the one written", cfg.LLM.BaseURL)
			}
		})
	}
}
