package config

import (
	"strings"
	"testing"
)

// TestConfigEnvDefaults: ANIMA_TELEGRAM_TOKEN, ANIMA_LLM_API_KEY, ANIMA_STORAGE_PATH and
// ANIMA_METRICS_LISTEN fill in keys a file leaves out (issue 20: a config without
// token: failed with "telegram.token is empty" although the variable was set), and a
// value or ${VAR} reference written in the file wins.
func TestConfigEnvDefaults(t *testing.T) {
	t.Parallel()
	env := envMap(map[string]string{
		"ANIMA_TELEGRAM_TOKEN": fakeToken,
		"ANIMA_LLM_API_KEY":    "sk-env",
		"ANIMA_STORAGE_PATH":   "/data/anima.db",
		"ANIMA_METRICS_LISTEN": "0.0.0.0:9464",
		"OTHER_KEY":            "sk-other",
	})
	type want struct{ token, key, path, listen string }
	for _, tc := range []struct {
		name string
		yaml string
		env  func(string) (string, bool)
		want want
	}{
		{"empty file", "", env, want{fakeToken, "sk-env", "/data/anima.db", "0.0.0.0:9464"}},
		{"keys left out", "user: {timezone: UTC}\n", env, want{fakeToken, "sk-env", "/data/anima.db", "0.0.0.0:9464"}},
		{"keys without a value", "telegram: {token: }\nllm:\n  api_key:\nstorage: {path: }\n", env,
			want{fakeToken, "sk-env", "/data/anima.db", "0.0.0.0:9464"}},
		{"literals win", "storage: {path: ./mine.db}\nmetrics: {listen: '127.0.0.1:1'}\nllm: {api_key: sk-file}\n", env,
			want{fakeToken, "sk-file", "./mine.db", "127.0.0.1:1"}},
		{"metrics disabled in the file stays disabled", "metrics: {listen: ''}\n", env,
			want{fakeToken, "sk-env", "/data/anima.db", ""}},
		{"a reference wins", "llm: {api_key: '${OTHER_KEY}'}\n", env, want{fakeToken, "sk-other", "/data/anima.db", "0.0.0.0:9464"}},
		{"a reference wins even empty", "telegram: {token: '${UNSET_TOKEN}'}\n", env, want{"", "sk-env", "/data/anima.db", "0.0.0.0:9464"}},
		{"unset variables keep defaults", "", noEnv, want{"", "", "./data/anima.db", "127.0.0.1:9464"}},
		{"empty variables keep defaults", "", envMap(map[string]string{"ANIMA_STORAGE_PATH": ""}), want{"", "", "./data/anima.db", "127.0.0.1:9464"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse([]byte(tc.yaml), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			got := want{cfg.Telegram.Token.Reveal(), cfg.LLM.APIKey.Reveal(), cfg.Storage.Path, cfg.Metrics.Listen}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestWebhookSecretFromEnv: with secret_token absent the error said "set
// ANIMA_WEBHOOK_SECRET", and setting it changed nothing: only config.yaml's
// ${ANIMA_WEBHOOK_SECRET} read it (issue 26). It fills in the key like the others now.
func TestWebhookSecretFromEnv(t *testing.T) {
	t.Parallel()
	const webhook = "telegram:\n  mode: webhook\n  webhook: {public_url: 'https://bot.example.com/telegram'}\n"
	for _, tc := range []struct {
		name, yaml, want string
		env              func(string) (string, bool)
	}{
		{"from the environment", webhook, "s3cret_from-env", envMap(map[string]string{"ANIMA_WEBHOOK_SECRET": "s3cret_from-env"})},
		{"the file wins", strings.Replace(webhook, "}", ", secret_token: mine}", 1), "mine", envMap(map[string]string{"ANIMA_WEBHOOK_SECRET": "s3cret_from-env"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse([]byte(tc.yaml), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Telegram.Webhook.SecretToken.Reveal(); got != tc.want {
				t.Errorf("secret_token = %q, want %q", got, tc.want)
			}
		})
	}
	_, err := parse([]byte(webhook), noEnv)
	if err == nil || !strings.Contains(err.Error(), "set ANIMA_WEBHOOK_SECRET") {
		t.Errorf("webhook mode without a secret: %v, want an error saying to set ANIMA_WEBHOOK_SECRET", err)
	}
}
