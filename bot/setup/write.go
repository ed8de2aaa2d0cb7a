package setup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/anima-bot/anima/bot/config"
)

// configTemplate is what anima init writes: the keys it asked about, with comments, and
// pointers to the documented example for the rest. Values are YAML-quoted by quote.
var configTemplate = template.Must(template.New("config").Funcs(template.FuncMap{"quote": strconv.Quote}).Parse(
	`# anima configuration, written by ` + "`anima init`" + `.
# Every other key keeps its default: config.yaml in anima's repository documents them all.
# Values may read the environment as ${NAME} or ${NAME:-default}.
# This file holds the bot token and the model key: keep it private (mode 0600).

telegram:
  # Bot API token from @BotFather.
  token: {{quote .Token}}
{{- if ne .APIURL "https://api.telegram.org"}}
  # Bot API base URL.
  api_url: {{quote .APIURL}}
{{- end}}
  # Telegram user ids anima talks to; anyone else is ignored, and logged at WARN once an
  # hour with their user_id (add it here to let them in).
  allowed_users: [{{.Users}}]

llm:
  # Any OpenAI-compatible endpoint: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp.
  base_url: {{quote .BaseURL}}
{{- if .APIKey}}
  # Key for base_url.
  api_key: {{quote .APIKey}}
{{- else}}
  # Key for base_url: none for a server on this machine; ANIMA_LLM_API_KEY sets one.
  # api_key: ""
{{- end}}
  # Cheap, quick model for everyday turns.
  fast_model: {{quote .FastModel}}
  # Stronger model used when the fast one is not confident enough.
  smart_model: {{quote .SmartModel}}

storage:
  # bbolt file holding memories and state; the Docker image sets ANIMA_STORAGE_PATH.
  path: ${ANIMA_STORAGE_PATH:-./data/anima.db}

metrics:
  # /metrics, /healthz and /readyz; "" disables them. The Docker image sets ANIMA_METRICS_LISTEN.
  listen: ${ANIMA_METRICS_LISTEN:-127.0.0.1:9464}

user:
  # Your IANA time zone: quiet hours, reminders and time of day use it.
  timezone: {{quote .Timezone}}
`))

// write writes cfg's asked-for keys to path, mode 0600, refusing to replace an existing
// file unless force is set (then it is replaced whole, by a rename).
func write(path string, cfg config.Config, force bool) error {
	users := make([]string, len(cfg.Telegram.AllowedUsers))
	for i, u := range cfg.Telegram.AllowedUsers {
		users[i] = strconv.FormatInt(u, 10)
	}
	var b bytes.Buffer
	err := configTemplate.Execute(&b, map[string]string{
		"Token": escapeRefs(cfg.Telegram.Token.Reveal()), "APIURL": cfg.Telegram.APIURL, "Users": strings.Join(users, ", "),
		"BaseURL": escapeRefs(cfg.LLM.BaseURL), "APIKey": escapeRefs(cfg.LLM.APIKey.Reveal()),
		"FastModel": escapeRefs(cfg.LLM.FastModel), "SmartModel": escapeRefs(cfg.LLM.SmartModel), "Timezone": cfg.User.Timezone,
	})
	if err != nil {
		return fmt.Errorf("render configuration: %w", err)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if os.IsExist(err) {
				return fmt.Errorf("%s: %w", path, ErrExists)
			}
			return fmt.Errorf("create %s: %w", path, err)
		}
		if _, err := f.Write(b.Bytes()); err != nil {
			_ = f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".anima-init-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// escapeRefs keeps a "${" in a value from being read as a variable reference.
func escapeRefs(s string) string { return strings.ReplaceAll(s, "${", "$${") }
