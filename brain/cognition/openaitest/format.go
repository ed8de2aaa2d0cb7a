package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sashabaranov/go-openai"
)

// RefuseResponseFormat makes the server answer every request that sets a response_format
// other than text with 400, as endpoints without structured outputs do (OpenAI's own
// message, naming the parameter); refuse false takes it again. A refused request does not
// use up a scripted reply. Whether or not it refuses, a response_format is validated (see
// validate): one that is not a valid strict json_schema is a violation, answered 400.
func (s *Server) RefuseResponseFormat(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noFormat = refuse
}

// Formatted returns how many recorded requests asked for a json_schema response_format.
func (s *Server) Formatted() int {
	return s.count(func(r Request) bool {
		f := r.Body.ResponseFormat
		return f != nil && f.Type == openai.ChatCompletionResponseFormatTypeJSONSchema
	})
}

// refusesFormat reports whether req is refused for its response_format (s.mu held).
func (s *Server) refusesFormat(req openai.ChatCompletionRequest) bool {
	f := req.ResponseFormat
	return s.noFormat && f != nil && f.Type != "" && f.Type != openai.ChatCompletionResponseFormatTypeText
}

func writeFormatRefusal(w http.ResponseWriter, req openai.ChatCompletionRequest) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("Invalid parameter: 'response_format' of type '%s' is not supported with this model.", req.ResponseFormat.Type),
		"type":    "invalid_request_error", "param": "response_format", "code": nil,
	}})
}
