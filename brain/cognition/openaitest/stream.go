package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sashabaranov/go-openai"
)

// StreamMode says how the server answers a request with stream: true.
type StreamMode int

const (
	// StreamSSE (the default) streams the reply as server-sent events, the way OpenAI
	// does: a role chunk, content in small deltas, each tool call's id and name in its first
	// delta and its arguments in pieces (keyed by index), a finish chunk, a usage chunk when
	// stream_options.include_usage is set, then "data: [DONE]".
	StreamSSE StreamMode = iota
	// StreamRefuse answers stream: true with 400, as endpoints that cannot stream do.
	StreamRefuse
	// StreamIgnore ignores stream: true and answers a plain JSON completion.
	StreamIgnore
)

// SetStreaming sets how requests with stream: true are answered.
func (s *Server) SetStreaming(m StreamMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streaming = m
}

// Streamed returns how many recorded requests asked for a stream.
func (s *Server) Streamed() int {
	return s.count(func(r Request) bool { return r.Body.Stream })
}

// stream writes reply as server-sent events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req openai.ChatCompletionRequest, reply Reply) {
	s.mu.Lock()
	s.seq++
	id := "chatcmpl-" + strconv.Itoa(s.seq)
	callIDs := make([]string, len(reply.ToolCalls))
	for i := range reply.ToolCalls {
		callIDs[i] = fmt.Sprintf("call_%d_%d", s.seq, i)
		s.issued[callIDs[i]] = true
	}
	s.mu.Unlock()

	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	first := true
	send := func(ch openai.ChatCompletionStreamResponse) bool {
		if !first && reply.ChunkDelay > 0 {
			t := time.NewTimer(reply.ChunkDelay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return false
			case <-s.done:
				t.Stop()
				return false
			}
		}
		first = false
		ch.ID, ch.Object, ch.Created, ch.Model = id, "chat.completion.chunk", created, req.Model
		b, _ := json.Marshal(ch)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	delta := func(d openai.ChatCompletionStreamChoiceDelta, finish openai.FinishReason) openai.ChatCompletionStreamResponse {
		return openai.ChatCompletionStreamResponse{Choices: []openai.ChatCompletionStreamChoice{{Delta: d, FinishReason: finish}}}
	}

	if !send(delta(openai.ChatCompletionStreamChoiceDelta{Role: openai.ChatMessageRoleAssistant}, "")) {
		return
	}
	size := reply.Chunk
	if size <= 0 && reply.ChunkDelay == 0 {
		size = len(reply.Content) // one delta
	}
	for _, piece := range chunks(reply.Content, size) {
		if !send(delta(openai.ChatCompletionStreamChoiceDelta{Content: piece}, "")) {
			return
		}
	}
	completionChars := len(reply.Content)
	finish := openai.FinishReasonStop
	for i, c := range reply.ToolCalls {
		finish = openai.FinishReasonToolCalls
		completionChars += len(c.Name) + len(c.Args)
		idx := i
		head := openai.ToolCall{Index: &idx, ID: callIDs[i], Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.Name}}
		if !send(delta(openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{head}}, "")) {
			return
		}
		for _, piece := range chunks(c.Args, 5) {
			part := openai.ToolCall{Index: &idx, Function: openai.FunctionCall{Arguments: piece}}
			if !send(delta(openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{part}}, "")) {
				return
			}
		}
	}
	if !send(delta(openai.ChatCompletionStreamChoiceDelta{}, finish)) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		usage := replyUsage(reply, req, completionChars)
		if !send(openai.ChatCompletionStreamResponse{Choices: []openai.ChatCompletionStreamChoice{}, Usage: &usage}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// chunks cuts s into pieces of n runes (default 8).
func chunks(s string, n int) []string {
	if n <= 0 {
		n = 8
	}
	var out []string
	runes := []rune(s)
	for len(runes) > 0 {
		k := min(n, len(runes))
		out = append(out, string(runes[:k]))
		runes = runes[k:]
	}
	return out
}
