package config

import (
	"strings"
	"testing"
)

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
