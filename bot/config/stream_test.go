package config

import "testing"

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
