package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// briefHeading opens the prompt's brief section (brain/prompt/brief.go): the
// situation in the words the model is given.
const briefHeading = "How things stand:"

// recorder sits in the model client's transport (cognition.NewClientThrough), for the
// scripted endpoint and a live one alike: it counts the requests a run sends and their
// bytes, and keeps the brief of the last prompt that had one, so that the summary can
// show what each first message was written from.
type recorder struct {
	next http.RoundTripper

	mu       sync.Mutex // requests may come from the memory summarizer's goroutine
	requests int
	bytes    int64
	brief    string
}

// wrap is the recorder as cognition.NewClientThrough's wrap.
func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	r.next = next
	return r
}

// RoundTrip counts req, reads the brief from its body and sends it on.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("sim: read model request: %w", err)
		}
		body = b
		// A request body is read once: the one sent on is a copy (GetBody for redirects).
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	brief := briefOf(body)
	r.mu.Lock()
	r.requests++
	r.bytes += int64(len(body))
	if brief != "" {
		r.brief = brief
	}
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// counts returns the requests sent so far and their bytes.
func (r *recorder) counts() (requests int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.bytes
}

// takeBrief returns the brief of the last prompt that had one since the previous call,
// and forgets it.
func (r *recorder) takeBrief() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.brief
	r.brief = ""
	return b
}

// briefOf is the brief section of a chat completion request's body: the system message
// that opens with the brief's heading; "" for a request without one (the memory
// summarizer's, or a prompt whose brief the budget cut).
func briefOf(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"` // a string, or parts for a message with media
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	for _, m := range req.Messages {
		if s, ok := m.Content.(string); ok && m.Role == "system" && strings.HasPrefix(s, briefHeading) {
			return s
		}
	}
	return ""
}
