package provider

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/sashabaranov/go-openai"
)

// Classes of a failed request, as Classify names them (the outcome labels of
// anima_llm_requests_total and anima_media_total).
const (
	ClassError       = "error"
	ClassTimeout     = "timeout"
	ClassRateLimited = "rate_limited"
	ClassServerError = "server_error"
)

// Classify names a failed request's error by its class and says whether it is worth
// retrying: a 429, a 5xx, a timeout, a transport error or a garbled body are the
// endpoint's and may pass; any other 4xx is the request's and will not.
func Classify(err error) (class string, retryable bool) {
	status := Status(err)
	var netErr net.Error
	switch {
	case status == http.StatusTooManyRequests:
		return ClassRateLimited, true
	case status >= 500:
		return ClassServerError, true
	case status >= 400:
		return ClassError, false
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return ClassTimeout, true
	}
	return ClassError, true // transport errors, garbled bodies
}

// Status is the HTTP status an endpoint answered a failed request with; 0 when there was
// no answer. A redacted error (Redact) keeps it.
func Status(err error) int {
	status, _ := Answer(err)
	return status
}

// Answer is an endpoint's error answer to a failed request, from go-openai's *APIError (a
// JSON error body: the status and its message) or *RequestError (any other body: the
// status and the raw body); 0 and "" when there was no answer. The message is the
// endpoint's own: not for logging (Redact is).
func Answer(err error) (status int, msg string) {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode, apiErr.Message
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode, string(reqErr.Body)
	}
	return 0, ""
}
