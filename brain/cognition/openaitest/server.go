// Package openaitest is a fake OpenAI-compatible chat completions server on httptest, for
// driving the real go-openai client in tests. It records and strictly validates every
// request (roles, tool call ids, strict tool schemas), answers from a script of replies
// (content, tool calls, HTTP errors, Retry-After, delays) — streamed as server-sent events
// when the request asks for a stream (see StreamMode) — and, when the script is empty,
// from a default responder — by default an instant echo, which is what load tests use.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
)

// Call is one tool call a scripted reply makes.
type Call struct {
	Name string
	Args string // the arguments as the model would send them (need not be valid JSON)
}

// Reply is one scripted answer.
type Reply struct {
	// Model, when set, restricts the reply to requests for that model; replies for other
	// models stay queued.
	Model string
	// Content is the assistant message's content.
	Content string
	// ToolCalls are the tool calls of the assistant message (ids are issued by the server).
	ToolCalls []Call
	// Status is the HTTP status; 0 means 200. A status ≥ 400 sends an error.
	Status int
	// Body is the raw body of an error reply; empty means an OpenAI error JSON carrying
	// Message.
	Body string
	// Message is the error message of an error reply.
	Message string
	// RetryAfter is sent as the Retry-After header when set.
	RetryAfter string
	// Delay holds the reply back (wall-clock; prefer Hang for timeouts).
	Delay time.Duration
	// Hang holds the reply until the client gives up or the server closes.
	Hang bool
	// PromptTokens and CompletionTokens override the usage estimate when non-zero.
	PromptTokens, CompletionTokens int
	// ChunkDelay, for a streamed reply, pauses between its chunks (wall-clock): a model
	// writing at that pace. Chunk is the content's size per chunk in runes; 0 sends the
	// content in one delta (an instant model, as the load test wants), unless ChunkDelay is
	// set, when it defaults to 8.
	ChunkDelay time.Duration
	Chunk      int
}

// Responder answers a request when no scripted reply matches.
type Responder func(req openai.ChatCompletionRequest) Reply

// Request is one recorded request.
type Request struct {
	Body       openai.ChatCompletionRequest
	Raw        []byte
	Violations []string
}

// Server is the fake endpoint. It is safe for concurrent use.
type Server struct {
	srv  *httptest.Server
	done chan struct{}

	mu          sync.Mutex
	queue       []Reply
	def         Responder
	reqs        []Request
	violations  []string
	issued      map[string]bool
	seq         int
	streaming   StreamMode
	noFormat    bool        // refuse response_format (format.go)
	hear        Transcriber // nil: Hear
	heard       []Transcription
	speak       Speaker                   // nil: Speak (speech.go)
	speechFlow  func(Speech) SpeechStream // set: answers speech instead of speak (speech.go)
	spoken      []Speech
	wire        [][]byte    // every request as it arrived, for Contains
	listed      []string    // models GET /models lists; nil: 404 (models.go)
	key         string      // required API key; "" accepts any (models.go)
	embedded    []Embedding // recorded /embeddings requests (embeddings.go)
	embedModels []string    // models /embeddings serves; nil: any
	embedStatus int         // ≥ 400: every /embeddings request fails with it
	synonyms    [][]string  // nil: Synonyms
}

// New starts a server that is closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s, err := NewServer()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a server on 127.0.0.1 outside a test (a load test, a demo); the caller
// must Close it.
func NewServer() (*Server, error) {
	s := &Server{done: make(chan struct{}), def: Echo, issued: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /chat/completions", s.chat)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcription)
	mux.HandleFunc("POST /audio/transcriptions", s.transcription)
	mux.HandleFunc("POST /v1/audio/speech", s.speech)
	mux.HandleFunc("POST /audio/speech", s.speech)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("POST /embeddings", s.embeddings)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /models", s.models)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("openaitest: listen: %w", err)
	}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: s.recordWire(s.checkKey(mux))}}
	s.srv.Start()
	return s, nil
}

// Close releases hanging replies and stops the server. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
		close(s.done)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// URL is the base URL to give go-openai's ClientConfig.BaseURL.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Client returns a go-openai client for the server with the given HTTP timeout.
func (s *Server) Client(timeout time.Duration) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = &http.Client{Timeout: timeout}
	return openai.NewClientWithConfig(cfg)
}

// Enqueue appends scripted replies; they are served in order (each to the first request
// whose model it matches).
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// SetDefault replaces the responder used when no scripted reply matches (nil = Echo).
func (s *Server) SetDefault(f Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		f = Echo
	}
	s.def = f
}

// Pending is the number of scripted replies not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of the recorded requests, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// count returns how many recorded requests match.
func (s *Server) count(match func(Request) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if match(r) {
			n++
		}
	}
	return n
}

// Models returns the model of each recorded request, in arrival order.
func (s *Server) Models() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r.Body.Model
	}
	return out
}

// Violations returns every validation failure seen so far, prefixed by the request's
// index. Tests assert it is empty.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Echo is the default responder: an instant final answer that echoes the last user text.
func Echo(req openai.ChatCompletionRequest) Reply {
	last := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == openai.ChatMessageRoleUser {
			last = messageText(m.Content, m.MultiContent)
			break
		}
	}
	return Answer("echo: "+last, "active", 0.9)
}

// EchoCosting answers as Echo does, each reply costing prompt and completion tokens: a
// handler for SetDefault.
func EchoCosting(prompt, completion int) func(openai.ChatCompletionRequest) Reply {
	return func(req openai.ChatCompletionRequest) Reply {
		r := Echo(req)
		r.PromptTokens, r.CompletionTokens = prompt, completion
		return r
	}
}

// Answer is a final reply whose content is the JSON the cognition loop expects.
func Answer(response, status string, confidence float64) Reply {
	b, _ := json.Marshal(map[string]any{"response": response, "status": status, "confidence": confidence})
	return Reply{Content: string(b)}
}

// OpenerAnswer is a final answer in the format of a run that may write first: Answer's
// fields and topic (null when empty).
func OpenerAnswer(response, status string, confidence float64, topic string) Reply {
	var t any
	if topic != "" {
		t = topic
	}
	b, _ := json.Marshal(map[string]any{"response": response, "status": status, "confidence": confidence, "topic": t})
	return Reply{Content: string(b)}
}

// Tool is a reply that makes one tool call.
func Tool(name, args string) Reply { return Reply{ToolCalls: []Call{{Name: name, Args: args}}} }

// Fail is an OpenAI-style JSON error reply with the given status.
func Fail(status int) Reply {
	return Reply{Status: status, Message: http.StatusText(status)}
}

// ForModel returns r restricted to model.
func (r Reply) ForModel(model string) Reply { r.Model = model; return r }
