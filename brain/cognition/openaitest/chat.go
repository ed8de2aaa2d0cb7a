package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// chat serves a chat completion request: it records the request with what validate
// finds wrong in it, then answers with the next queued Reply (or the default).
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	var body openai.ChatCompletionRequest
	decodeErr := json.Unmarshal(raw, &body)

	s.mu.Lock()
	idx := len(s.reqs)
	problems := validate(raw, func(id string) bool { return s.issued[id] })
	if decodeErr != nil {
		problems = append(problems, fmt.Sprintf("go-openai cannot decode the request: %v", decodeErr))
	}
	s.reqs = append(s.reqs, Request{Body: body, Raw: raw, Violations: problems})
	s.noteLocked("request", idx, problems)
	refuse := len(problems) == 0 && s.refusesFormat(body)
	var reply Reply
	if len(problems) == 0 && !refuse {
		reply = s.next(body)
	}
	s.mu.Unlock()

	if refuse {
		writeFormatRefusal(w, body)
		return
	}
	if rejected(w, problems) {
		return
	}
	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.done:
			t.Stop()
			return
		}
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	if reply.Status >= 400 {
		if reply.Body != "" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(reply.Status)
			_, _ = w.Write([]byte(reply.Body))
			return
		}
		msg := reply.Message
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, reply.Status, "server_error", msg)
		return
	}
	if body.Stream {
		s.mu.Lock()
		mode := s.streaming
		s.mu.Unlock()
		switch mode {
		case StreamRefuse:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "stream is not supported")
			return
		case StreamSSE:
			s.stream(w, r, body, reply)
			return
		}
	}
	s.answer(w, body, reply)
}

// next pops the first queued reply for the request's model, else asks the responder.
// Called with s.mu held.
func (s *Server) next(req openai.ChatCompletionRequest) Reply {
	for i, q := range s.queue {
		if q.Model == "" || q.Model == req.Model {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return q
		}
	}
	return s.def(req)
}

func (s *Server) answer(w http.ResponseWriter, req openai.ChatCompletionRequest, reply Reply) {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply.Content}
	finish := openai.FinishReasonStop
	completionChars := len(reply.Content)
	s.mu.Lock()
	s.seq++
	id := "chatcmpl-" + strconv.Itoa(s.seq)
	for i, c := range reply.ToolCalls {
		callID := fmt.Sprintf("call_%d_%d", s.seq, i)
		s.issued[callID] = true
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID: callID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Args},
		})
		completionChars += len(c.Name) + len(c.Args)
		finish = openai.FinishReasonToolCalls
	}
	s.mu.Unlock()

	usage := replyUsage(reply, req, completionChars)
	resp := openai.ChatCompletionResponse{
		ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   usage,
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func promptChars(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(messageText(m.Content, m.MultiContent))
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	return n
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "code": nil},
	})
}

// noteLocked adds what is wrong with the idx-th request of a kind (request, transcription,
// speech) to the server's violations; s.mu is held.
func (s *Server) noteLocked(kind string, idx int, problems []string) {
	for _, p := range problems {
		s.violations = append(s.violations, fmt.Sprintf("%s %d: %s", kind, idx, p))
	}
}

// rejected answers 400 with the problems, if there are any, and says whether it did.
func rejected(w http.ResponseWriter, problems []string) bool {
	if len(problems) == 0 {
		return false
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", strings.Join(problems, "; "))
	return true
}

// writeFailure answers a scripted failure: the status with msg, or the status's text if msg
// is empty.
func writeFailure(w http.ResponseWriter, status int, typ, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	writeError(w, status, typ, msg)
}

// messageText is a message's text: its content, or its text parts joined by newlines.
func messageText(content string, parts []openai.ChatMessagePart) string {
	if content != "" || len(parts) == 0 {
		return content
	}
	var texts []string
	for _, p := range parts {
		if p.Type == openai.ChatMessagePartTypeText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// replyUsage is the token usage reported for reply: the counts the script set, else
// about four characters a token of the prompt and of what was written.
func replyUsage(reply Reply, req openai.ChatCompletionRequest, completionChars int) openai.Usage {
	usage := openai.Usage{PromptTokens: reply.PromptTokens, CompletionTokens: reply.CompletionTokens}
	if usage.PromptTokens == 0 {
		usage.PromptTokens = max(1, promptChars(req)/4)
	}
	if usage.CompletionTokens == 0 {
		usage.CompletionTokens = max(1, completionChars/4)
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	return usage
}
