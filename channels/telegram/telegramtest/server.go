// Package telegramtest is an honest fake of the Telegram Bot API on httptest, for tests
// that drive the real go-telegram/bot client (and anima's own getUpdates loop) over real
// HTTP on 127.0.0.1.
//
// It routes /bot<token>/<method>, checks the token (401) and the method against the
// embedded Bot API spec (404), parses JSON, multipart and url-encoded bodies, rejects
// missing required parameters (400), implements getUpdates with Telegram's offset
// confirmation and long polling, validates sendMessage text (4096 UTF-16 units after
// entity parsing, Telegram's HTML subset), checks and records sendVoice (an uploaded
// Ogg/Opus file, a caption of at most 1024 units; voice.go) and sendMessageDraft (private
// chats, a non-zero draft_id), records every call, and can inject faults
// (429 with retry_after, 5xx, 403, non-JSON bodies) and latency.
package telegramtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
)

// Defaults of a new Server.
const (
	DefaultToken         = "123456:TEST-fake-token-ABCDEFGHIJKLMNOPQRSTUV" // Bot API shape: id, colon, 30+ URL-safe characters
	DefaultBotID   int64 = 123456
	DefaultBotName       = "anima_bot"
)

// Server is a fake Telegram Bot API. All methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give to clients as the API URL (no trailing slash).
	URL   string
	Token string
	Bot   models.User

	srv    *httptest.Server
	spec   map[string]methodSpec
	closed chan struct{}
	once   sync.Once

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every state change
	queue      []queued      // pending (unconfirmed) updates, ascending ids
	nextUpdate int64
	nextMsg    int
	webhookURL string
	calls      []Call
	sent       []Message
	voices     []Voice // sendVoice (voice.go)
	polls      []Poll
	webhooks   []Webhook
	actions    []ChatAction
	answers    []CallbackAnswer
	drafts     []Draft
	faults     map[string][]Fault // lower-case method → queued faults
	latency    time.Duration
	files      map[string]*heldFile // by file id
	downloads  []Download
	members    map[int64]map[int64]string // chat → user → status (members.go)
	clock      func() time.Time           // dates messages and updates; nil is time.Now
}

// Option configures a Server.
type Option func(*Server)

// WithToken sets the bot token the server accepts.
func WithToken(token string) Option { return func(s *Server) { s.Token = token } }

// WithBot sets the user getMe returns.
func WithBot(u models.User) Option { return func(s *Server) { s.Bot = u } }

// SetClock makes now the server's clock: the date of the messages and updates it queues
// without one and of the messages it sends. A test that runs anima on a manual clock
// gives the server the same clock, as Telegram's clock and the bot's agree.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// now is the server's clock.
func (s *Server) now() time.Time {
	s.mu.Lock()
	clock := s.clock
	s.mu.Unlock()
	if clock == nil {
		return time.Now()
	}
	return clock()
}

// New starts a fake Bot API server on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := NewServer(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a fake Bot API server on 127.0.0.1 outside a test (a load test, a
// demo); the caller must Close it.
func NewServer(opts ...Option) (*Server, error) {
	spec, err := loadSpec()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Token:      DefaultToken,
		Bot:        models.User{ID: DefaultBotID, IsBot: true, FirstName: "Anima", Username: DefaultBotName},
		spec:       spec,
		closed:     make(chan struct{}),
		changed:    make(chan struct{}),
		nextUpdate: 1,
		nextMsg:    1000,
		faults:     map[string][]Fault{},
	}
	for _, o := range opts {
		o(s)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("telegramtest: listen: %w", err)
	}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}}
	s.srv.Start()
	s.URL = s.srv.URL
	return s, nil
}

// Close ends pending long polls and shuts the server down. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// notifyLocked wakes everyone waiting for a state change. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
