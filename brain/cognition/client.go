package cognition

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
)

// NewClient returns a go-openai client for an OpenAI-compatible endpoint at baseURL (for
// example "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1"). Every HTTP request
// is bounded by timeout. Its transport also hands the Retry-After header of 429 and 503
// answers to Cognition, which go-openai's errors do not carry.
func NewClient(baseURL, apiKey string, timeout time.Duration) *openai.Client {
	return NewClientThrough(baseURL, apiKey, timeout, nil)
}

// NewClientThrough is NewClient whose requests pass through wrap first (nil: none): the
// simulator counts the requests of a run and reads the prompts it sent, over the same
// client `anima run` uses.
func NewClientThrough(baseURL, apiKey string, timeout time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *openai.Client {
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	var rt http.RoundTripper = retryAfterTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	if wrap != nil {
		rt = wrap(rt)
	}
	cfg.HTTPClient = &http.Client{Timeout: timeout, Transport: rt}
	return openai.NewClientWithConfig(cfg)
}

// retryAfterTransport records the Retry-After header of throttled answers into the slot
// carried by the request's context, if any.
type retryAfterTransport struct{ base http.RoundTripper }

func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if slot, ok := req.Context().Value(retryAfterKey{}).(*retryAfterSlot); ok {
			slot.set(resp.Header.Get("Retry-After"))
		}
	}
	return resp, err
}

type retryAfterKey struct{}

// retryAfterSlot carries one request's Retry-After header out of the transport.
type retryAfterSlot struct {
	mu    sync.Mutex
	value string
}

func (s *retryAfterSlot) set(v string) {
	s.mu.Lock()
	s.value = v
	s.mu.Unlock()
}

// wait parses the header as seconds or an HTTP date; ok is false when it is absent or
// unusable.
func (s *retryAfterSlot) wait(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	v := strings.TrimSpace(s.value)
	s.mu.Unlock()
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(now)), true
	}
	return 0, false
}

func withRetryAfterSlot(ctx context.Context) (context.Context, *retryAfterSlot) {
	slot := &retryAfterSlot{}
	return context.WithValue(ctx, retryAfterKey{}, slot), slot
}
