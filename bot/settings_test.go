package bot

import (
	"testing"

	"github.com/anima-bot/anima/bot/config"
)

// TestAnswerFormatResolved: llm.answer_format auto asks for the json_schema format of
// OpenAI's own API only; json_schema and text are taken as said.
func TestAnswerFormatResolved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format, base string
		want         bool
	}{
		{"auto", "https://api.openai.com/v1", true},
		{"auto", "https://API.OpenAI.com:443/v1", true},
		{"auto", "http://127.0.0.1:11434/v1", false},
		{"auto", "https://openrouter.ai/api/v1", false},
		{"json_schema", "http://127.0.0.1:11434/v1", true},
		{"text", "https://api.openai.com/v1", false},
	}
	for _, tc := range tests {
		if got := answerFormat(config.LLMConfig{AnswerFormat: tc.format, BaseURL: tc.base}); got != tc.want {
			t.Errorf("answer_format %s at %s: %v, want %v", tc.format, tc.base, got, tc.want)
		}
	}
}
