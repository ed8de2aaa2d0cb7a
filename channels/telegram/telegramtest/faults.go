package telegramtest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault is an injected failure for the next call(s) of a method.
type Fault struct {
	Code        int    // error_code and HTTP status (429, 500, 502, 403, 409, 400 …)
	Description string // default derived from Code
	RetryAfter  int    // parameters.retry_after for 429
	// RawBody, when set, is sent as the whole response body instead of JSON (with
	// HTTP status Code, or 502 if Code is 0): a proxy's error page.
	RawBody string
	// Pass lets the call through as if no fault were queued: it lines faults up behind
	// successful calls (the second part of a message fails, say).
	Pass bool
}

// FailNext makes the next n calls of method fail with code (and retry_after for 429).
func (s *Server) FailNext(method string, n, code, retryAfter int) {
	for range n {
		s.InjectFault(method, Fault{Code: code, RetryAfter: retryAfter})
	}
}

// InjectFault queues f for the next call of method, after faults already queued.
func (s *Server) InjectFault(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.ToLower(method)
	s.faults[k] = append(s.faults[k], f)
}

// SetLatency delays every answer by d (0 turns it off).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// describe is Telegram's description for an error code.
func describe(code, retryAfter int) string {
	switch code {
	case http.StatusTooManyRequests:
		return "Too Many Requests: retry after " + strconv.Itoa(retryAfter)
	case http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case http.StatusConflict:
		return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	case http.StatusBadRequest:
		return "Bad Request"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusBadGateway:
		return "Bad Gateway"
	default:
		if code >= 500 {
			return "Internal Server Error"
		}
		return http.StatusText(code)
	}
}

// takeFault returns the latency to wait and the fault queued for the next call of method
// (nil if none, or if the queued one only lets the call pass), consuming it.
func (s *Server) takeFault(method string) (time.Duration, *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var fault *Fault
	if fs := s.faults[strings.ToLower(method)]; len(fs) > 0 {
		if !fs[0].Pass {
			fault = &fs[0]
		}
		s.faults[strings.ToLower(method)] = fs[1:]
	}
	return s.latency, fault
}

// status is the HTTP status the fault answers with.
func (f *Fault) status() int {
	if f.RawBody != "" && f.Code == 0 {
		return http.StatusBadGateway
	}
	return f.Code
}

// write answers with the fault: its raw body, or the Bot API's error envelope.
func (f *Fault) write(w http.ResponseWriter) {
	status := f.status()
	if f.RawBody != "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, f.RawBody)
		return
	}
	resp := apiResponse{ErrorCode: status, Description: f.Description}
	if resp.Description == "" {
		resp.Description = describe(status, f.RetryAfter)
	}
	if f.RetryAfter > 0 {
		resp.Parameters = &respParams{RetryAfter: f.RetryAfter}
	}
	writeJSON(w, status, resp)
}
