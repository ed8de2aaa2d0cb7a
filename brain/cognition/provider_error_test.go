package cognition

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sashabaranov/go-openai"
)

// TestRefusesStream: only a 4xx that says streaming is unsupported turns streaming off.
func TestRefusesStream(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&openai.APIError{HTTPStatusCode: 400, Message: "stream is not supported"}, true},
		{&openai.APIError{HTTPStatusCode: 400, Message: "Streaming is unsupported for this model"}, true},
		{&openai.APIError{HTTPStatusCode: 422, Message: "This endpoint does not support streaming responses"}, true},
		{&openai.RequestError{HTTPStatusCode: 400, Body: []byte("<h1>stream: not supported</h1>")}, true},
		{&openai.APIError{HTTPStatusCode: 400, Message: "maximum context length is 8192 tokens"}, false},
		{&openai.APIError{HTTPStatusCode: 400, Message: "Invalid value for 'temperature'"}, false},
		{&openai.APIError{HTTPStatusCode: 400, Message: `content "please stream it" is not supported`}, false},
		{&openai.APIError{HTTPStatusCode: 429, Message: "stream not supported while rate limited"}, false},
		{&openai.APIError{HTTPStatusCode: 500, Message: "streaming unsupported"}, false},
		{errors.New("connection reset"), false},
	} {
		if got := refusesStream(fmt.Errorf("wrapped: %w", tc.err)); got != tc.want {
			t.Errorf("refusesStream(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
