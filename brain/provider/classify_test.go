package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/provider"
)

// TestClassify: the endpoint's failures (429, 5xx, timeouts, transport errors) are
// retryable; any other 4xx is the request's and is not.
func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err       error
		class     string
		retryable bool
	}{
		{&openai.APIError{HTTPStatusCode: 429, Message: "slow down"}, provider.ClassRateLimited, true},
		{&openai.RequestError{HTTPStatusCode: 502, Body: []byte("<b>Bad gateway</b>")}, provider.ClassServerError, true},
		{&openai.APIError{HTTPStatusCode: 400, Message: "bad input"}, provider.ClassError, false},
		{&openai.RequestError{HTTPStatusCode: 404}, provider.ClassError, false},
		{context.DeadlineExceeded, provider.ClassTimeout, true},
		{&net.OpError{Op: "dial", Err: timeoutErr{}}, provider.ClassTimeout, true},
		{errors.New("connection reset"), provider.ClassError, true},
	} {
		class, retryable := provider.Classify(fmt.Errorf("request: %w", tc.err))
		if class != tc.class || retryable != tc.retryable {
			t.Errorf("Classify(%v) = %s, %v; want %s, %v", tc.err, class, retryable, tc.class, tc.retryable)
		}
	}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestRedactedErrorKeepsStatus: a redacted provider error still classifies by its status.
func TestRedactedErrorKeepsStatus(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&openai.APIError{HTTPStatusCode: 429, Message: `slow down on "my secret"`},
		&openai.RequestError{HTTPStatusCode: 502, Body: []byte("<b>Bad gateway</b>")},
	} {
		if got := provider.Status(fmt.Errorf("think: %w", provider.Redact(err))); got == 0 {
			t.Errorf("the status of %v is lost beneath its redaction", err)
		}
	}
}
