package telegramtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Call is one request the fake answered, whatever its outcome.
type Call struct {
	Method string            // canonical name, e.g. "sendMessage"
	Params map[string]string // parameters; JSON values (objects, arrays) as raw JSON text
	At     time.Time         // when the request arrived
	Status int               // HTTP status the fake answered with
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
}

// Calls returns every call answered so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.calls)
	for i := range out {
		out[i].Params = maps.Clone(out[i].Params)
	}
	return out
}

// CallsTo returns the calls of one method (canonical spelling).
func (s *Server) CallsTo(method string) []Call {
	return slices.DeleteFunc(s.Calls(), func(c Call) bool { return c.Method != method })
}

// WaitFor blocks until cond (called without locks held) is true, or ctx ends.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("telegramtest: wait: %w", ctx.Err())
		}
	}
}

// WaitCalls waits until method was called at least n times and returns those calls.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	var out []Call
	err := s.WaitFor(ctx, func() bool {
		out = s.CallsTo(method)
		return len(out) >= n
	})
	return out, err
}
