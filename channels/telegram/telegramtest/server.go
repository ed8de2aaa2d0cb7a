// Package telegramtest is an honest fake of the Telegram Bot API on httptest, for tests
// that drive the real go-telegram/bot client (and anima's own getUpdates loop) over real
// HTTP on 127.0.0.1.
//
// It routes /bot<token>/<method>, checks the token (401) and the method against the
// embedded Bot API spec (404), parses JSON, multipart and url-encoded bodies, rejects
// missing required parameters (400), implements getUpdates with Telegram's offset
// confirmation and long polling, validates sendMessage text (4096 UTF-16 units after
// entity parsing, Telegram's HTML subset), checks and records sendMessageDraft (private
// chats, a non-zero draft_id), records every call, and can inject faults
// (429 with retry_after, 5xx, 403, non-JSON bodies) and latency.
package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
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

// MaxMessageLength is Telegram's limit on a message's text, in UTF-16 code units after
// entity parsing.
const MaxMessageLength = 4096

// Call is one request the fake answered, whatever its outcome.
type Call struct {
	Method string            // canonical name, e.g. "sendMessage"
	Params map[string]string // parameters; JSON values (objects, arrays) as raw JSON text
	At     time.Time         // when the request arrived
	Status int               // HTTP status the fake answered with
}

// Message is a message the bot sent with sendMessage.
type Message struct {
	ID          int
	ChatID      int64
	Text        string // as sent (with HTML tags for parse_mode HTML)
	Visible     string // what the user sees: tags removed and entities decoded
	ParseMode   string
	ReplyTo     int             // reply_parameters.message_id, 0 if none
	ReplyMarkup json.RawMessage // raw reply_markup, nil if none
	LinkPreview json.RawMessage // raw link_preview_options, nil if none
	At          time.Time       // when the fake received it
}

// Poll is one getUpdates call.
type Poll struct {
	Offset   int64 // the offset parameter (0 if absent)
	Limit    int
	Timeout  int     // seconds
	Returned []int64 // update ids returned
	At       time.Time
	// Answered is when the fake handed the updates out (built its answer); zero while the
	// long poll is still in progress.
	Answered time.Time
}

// Webhook is a setWebhook call.
type Webhook struct {
	URL            string
	SecretToken    string
	AllowedUpdates []string
	MaxConnections int
	At             time.Time
}

// ChatAction is a sendChatAction call.
type ChatAction struct {
	ChatID int64
	Action string
	At     time.Time
}

// CallbackAnswer is an answerCallbackQuery call.
type CallbackAnswer struct {
	ID   string
	Text string
	At   time.Time
}

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

type queued struct {
	id  int64
	raw json.RawMessage
}

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
}

// Option configures a Server.
type Option func(*Server)

// WithToken sets the bot token the server accepts.
func WithToken(token string) Option { return func(s *Server) { s.Token = token } }

// WithBot sets the user getMe returns.
func WithBot(u models.User) Option { return func(s *Server) { s.Bot = u } }

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

// apiResponse is the Bot API's envelope.
type apiResponse struct {
	OK          bool        `json:"ok"`
	Result      any         `json:"result,omitempty"`
	ErrorCode   int         `json:"error_code,omitempty"`
	Description string      `json:"description,omitempty"`
	Parameters  *respParams `json:"parameters,omitempty"`
}

type respParams struct {
	RetryAfter int `json:"retry_after,omitempty"`
}

// apiError is a failed call: its HTTP status equals error_code, as with Telegram.
type apiError struct {
	code       int
	desc       string
	retryAfter int
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: http.StatusBadRequest, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v apiResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeJSON(w, http.StatusNotFound, apiResponse{ErrorCode: 404, Description: "Not Found"})
		return
	}
	if token != s.Token {
		writeJSON(w, http.StatusUnauthorized, apiResponse{ErrorCode: 401, Description: "Unauthorized"})
		return
	}
	ms, ok := s.spec[strings.ToLower(method)]
	if !ok {
		writeJSON(w, http.StatusNotFound, apiResponse{ErrorCode: 404, Description: "Not Found"})
		return
	}
	params, err := parseParams(r)
	if err != nil {
		s.record(Call{Method: ms.Name, Params: params, At: at, Status: http.StatusBadRequest})
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: " + err.Error()})
		return
	}

	s.mu.Lock()
	latency := s.latency
	var fault *Fault
	if fs := s.faults[strings.ToLower(ms.Name)]; len(fs) > 0 {
		if !fs[0].Pass {
			fault = &fs[0]
		}
		s.faults[strings.ToLower(ms.Name)] = fs[1:]
	}
	s.mu.Unlock()

	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}

	if fault != nil {
		status := fault.Code
		if fault.RawBody != "" {
			if status == 0 {
				status = http.StatusBadGateway
			}
			s.record(Call{Method: ms.Name, Params: params, At: at, Status: status})
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, fault.RawBody)
			return
		}
		resp := apiResponse{ErrorCode: status, Description: fault.Description}
		if resp.Description == "" {
			resp.Description = describe(status, fault.RetryAfter)
		}
		if fault.RetryAfter > 0 {
			resp.Parameters = &respParams{RetryAfter: fault.RetryAfter}
		}
		s.record(Call{Method: ms.Name, Params: params, At: at, Status: status})
		writeJSON(w, status, resp)
		return
	}

	for _, f := range ms.Required {
		if strings.TrimSpace(params[f]) == "" {
			s.record(Call{Method: ms.Name, Params: params, At: at, Status: http.StatusBadRequest})
			writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: " + f + " is empty"})
			return
		}
	}

	result, aerr := s.dispatch(r.Context(), ms.Name, params, at)
	if aerr != nil {
		s.record(Call{Method: ms.Name, Params: params, At: at, Status: aerr.code})
		resp := apiResponse{ErrorCode: aerr.code, Description: aerr.desc}
		if aerr.retryAfter > 0 {
			resp.Parameters = &respParams{RetryAfter: aerr.retryAfter}
		}
		writeJSON(w, aerr.code, resp)
		return
	}
	s.record(Call{Method: ms.Name, Params: params, At: at, Status: http.StatusOK})
	writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: result})
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

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
}

// parseParams reads the parameters of a request: query string plus a JSON, multipart or
// url-encoded body. JSON strings become their value; other JSON values stay raw JSON.
func parseParams(r *http.Request) (map[string]string, error) {
	params := map[string]string{}
	for k, v := range r.URL.Query() {
		params[k] = v[len(v)-1]
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" || r.ContentLength == 0 {
		return params, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return params, fmt.Errorf("unsupported Content-Type %q", ct)
	}
	switch mt {
	case "application/json":
		var body map[string]json.RawMessage
		if err := json.NewDecoder(io.LimitReader(r.Body, 10<<20)).Decode(&body); err != nil {
			return params, fmt.Errorf("can't parse JSON object")
		}
		for k, raw := range body {
			var str string
			if json.Unmarshal(raw, &str) == nil {
				params[k] = str
			} else if string(raw) != "null" {
				params[k] = string(raw)
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(10 << 20); err != nil {
			return params, fmt.Errorf("can't parse multipart body")
		}
		for k, v := range r.MultipartForm.Value {
			params[k] = v[len(v)-1]
		}
		for k := range r.MultipartForm.File {
			params[k] = "attach://" + k
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return params, fmt.Errorf("can't parse form body")
		}
		for k, v := range r.PostForm {
			params[k] = v[len(v)-1]
		}
	default:
		return params, fmt.Errorf("unsupported Content-Type %q", mt)
	}
	return params, nil
}

func (s *Server) dispatch(ctx context.Context, method string, p map[string]string, at time.Time) (any, *apiError) {
	switch method {
	case "getFile":
		return s.getFile(p)
	case "getMe":
		return s.Bot, nil
	case "getUpdates":
		return s.getUpdates(ctx, p, at)
	case "sendMessage":
		return s.sendMessage(p, at)
	case "sendMessageDraft":
		return s.sendMessageDraft(p, at)
	case "sendChatAction":
		chat, err := chatID(p)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.actions = append(s.actions, ChatAction{ChatID: chat, Action: p["action"], At: at})
		s.mu.Unlock()
		return true, nil
	case "setWebhook":
		wh := Webhook{URL: p["url"], SecretToken: p["secret_token"], At: at}
		if v := p["allowed_updates"]; v != "" {
			if err := json.Unmarshal([]byte(v), &wh.AllowedUpdates); err != nil {
				return nil, badRequest("can't parse allowed updates")
			}
		}
		if v := p["max_connections"]; v != "" {
			wh.MaxConnections, _ = strconv.Atoi(v)
		}
		if u, err := url.Parse(wh.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, badRequest("bad webhook: invalid URL")
		}
		s.mu.Lock()
		s.webhookURL = wh.URL
		s.webhooks = append(s.webhooks, wh)
		s.mu.Unlock()
		return true, nil
	case "deleteWebhook":
		s.mu.Lock()
		s.webhookURL = ""
		if p["drop_pending_updates"] == "true" {
			s.queue = nil
		}
		s.mu.Unlock()
		return true, nil
	case "getChatMember":
		return s.getChatMember(p)
	case "answerCallbackQuery":
		s.mu.Lock()
		s.answers = append(s.answers, CallbackAnswer{ID: p["callback_query_id"], Text: p["text"], At: at})
		s.mu.Unlock()
		return true, nil
	default:
		// A method the fake does not model: succeed, so tests can still see the call.
		return true, nil
	}
}

func chatID(p map[string]string) (int64, *apiError) {
	v := p["chat_id"]
	if strings.HasPrefix(v, "@") {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

func (s *Server) getUpdates(ctx context.Context, p map[string]string, at time.Time) (any, *apiError) {
	var offset int64
	if v := p["offset"]; v != "" {
		o, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, badRequest("invalid offset")
		}
		offset = o
	}
	limit := 100
	if v := p["limit"]; v != "" {
		l, err := strconv.Atoi(v)
		if err != nil {
			return nil, badRequest("invalid limit")
		}
		limit = min(max(l, 1), 100)
	}
	timeout := 0
	if v := p["timeout"]; v != "" {
		t, err := strconv.Atoi(v)
		if err != nil {
			return nil, badRequest("invalid timeout")
		}
		timeout = max(t, 0)
	}

	s.mu.Lock()
	if s.webhookURL != "" {
		s.mu.Unlock()
		return nil, &apiError{code: http.StatusConflict, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	// Confirm: forget updates below the offset (a negative offset keeps the last -offset).
	switch {
	case offset > 0:
		i := 0
		for i < len(s.queue) && s.queue[i].id < offset {
			i++
		}
		s.queue = s.queue[i:]
	case offset < 0:
		if keep := int(-offset); keep < len(s.queue) {
			s.queue = s.queue[len(s.queue)-keep:]
		}
	}
	poll := Poll{Offset: offset, Limit: limit, Timeout: timeout, At: at}
	s.polls = append(s.polls, poll)
	idx := len(s.polls) - 1
	s.notifyLocked()

	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	for len(s.queue) == 0 && timeout > 0 {
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			timeout = 0
		case <-ctx.Done():
			timeout = 0
		case <-s.closed:
			timeout = 0
		}
		s.mu.Lock()
	}
	n := min(limit, len(s.queue))
	out := make([]json.RawMessage, n)
	ids := make([]int64, n)
	for i, q := range s.queue[:n] {
		out[i], ids[i] = q.raw, q.id
	}
	s.polls[idx].Returned = ids
	s.polls[idx].Answered = time.Now()
	s.notifyLocked()
	s.mu.Unlock()
	return out, nil
}

// messageText reads a message's text and parse mode and returns the text as a user sees
// it (entities parsed), refusing what Telegram refuses: entities it cannot parse, and
// more than 4096 UTF-16 units.
func messageText(p map[string]string) (text, mode, visible string, aerr *apiError) {
	text, mode = p["text"], p["parse_mode"]
	visible = text
	if strings.EqualFold(mode, "HTML") {
		v, err := ParseHTML(text)
		if err != nil {
			return "", "", "", badRequest("can't parse entities: %s", err.Error())
		}
		visible = v
	}
	if UTF16Len(visible) > MaxMessageLength {
		return "", "", "", badRequest("message is too long")
	}
	return text, mode, visible, nil
}

func (s *Server) sendMessage(p map[string]string, at time.Time) (any, *apiError) {
	chat, aerr := chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	text, mode, visible, aerr := messageText(p)
	if aerr != nil {
		return nil, aerr
	}
	if strings.TrimSpace(visible) == "" {
		return nil, badRequest("message text is empty")
	}
	m := Message{ChatID: chat, Text: text, Visible: visible, ParseMode: mode, At: at}
	if v := p["reply_markup"]; v != "" {
		if !json.Valid([]byte(v)) {
			return nil, badRequest("can't parse reply keyboard markup JSON object")
		}
		m.ReplyMarkup = json.RawMessage(v)
	}
	if v := p["link_preview_options"]; v != "" {
		m.LinkPreview = json.RawMessage(v)
	}
	if v := p["reply_parameters"]; v != "" {
		var rp struct {
			MessageID int `json:"message_id"`
		}
		if err := json.Unmarshal([]byte(v), &rp); err != nil {
			return nil, badRequest("can't parse reply parameters JSON object")
		}
		m.ReplyTo = rp.MessageID
	}
	s.mu.Lock()
	s.nextMsg++
	m.ID = s.nextMsg
	s.sent = append(s.sent, m)
	s.notifyLocked()
	s.mu.Unlock()
	chatType := models.ChatTypePrivate
	if chat < 0 {
		chatType = models.ChatTypeSupergroup
	}
	return models.Message{
		ID:   m.ID,
		From: &s.Bot,
		Date: int(at.Unix()),
		Chat: models.Chat{ID: chat, Type: chatType},
		Text: visible,
	}, nil
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

// pushRaw queues an update whose id is already set.
func (s *Server) push(id int64, raw json.RawMessage) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queued{id: id, raw: raw})
	s.notifyLocked()
	return id
}

// NextUpdateID reserves and returns the next update id.
func (s *Server) NextUpdateID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpdate
	s.nextUpdate++
	return id
}

// NextMessageID reserves and returns the next message id (shared with sent messages).
func (s *Server) NextMessageID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg++
	return s.nextMsg
}

// SkipUpdateIDs makes the next pushed update's id at least id.
func (s *Server) SkipUpdateIDs(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpdate = max(s.nextUpdate, id)
}

// PushUpdate queues u for getUpdates, assigning its update_id (which it returns).
func (s *Server) PushUpdate(u models.Update) int64 {
	u.ID = s.NextUpdateID()
	raw, err := json.Marshal(&u)
	if err != nil {
		panic(fmt.Sprintf("telegramtest: marshal update: %v", err))
	}
	return s.push(u.ID, raw)
}

// PushRaw queues raw (which must be valid JSON, but need not be a valid update) for
// getUpdates. If raw is an object its update_id is set to the assigned id, returned.
func (s *Server) PushRaw(raw []byte) int64 {
	if !json.Valid(raw) {
		panic("telegramtest: PushRaw needs valid JSON; use InjectFault for a broken body")
	}
	id := s.NextUpdateID()
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		obj["update_id"] = json.RawMessage(strconv.FormatInt(id, 10))
		raw, _ = json.Marshal(obj)
	}
	return s.push(id, raw)
}

// PushMessage queues a message update; a zero ID or Date is filled in. It returns the
// update id.
func (s *Server) PushMessage(m models.Message) int64 {
	if m.ID == 0 {
		m.ID = s.NextMessageID()
	}
	if m.Date == 0 {
		m.Date = int(time.Now().Unix())
	}
	return s.PushUpdate(models.Update{Message: &m})
}

// PushText queues a text message from userID in the private chat chatID.
func (s *Server) PushText(userID, chatID int64, text string) int64 {
	return s.PushMessage(TextMessage(userID, chatID, models.ChatTypePrivate, text))
}

// PushGroupText queues a text message from userID in the supergroup chatID.
func (s *Server) PushGroupText(userID, chatID int64, text string) int64 {
	return s.PushMessage(TextMessage(userID, chatID, models.ChatTypeSupergroup, text))
}

// PushCallback queues a callback query (an inline button press) from userID on a message
// of the bot in chatID, and returns the update id.
func (s *Server) PushCallback(userID, chatID int64, data string) int64 {
	cq := CallbackQuery(userID, chatID, s.NextMessageID(), data)
	cq.Message.Message.From = &s.Bot
	return s.PushUpdate(models.Update{CallbackQuery: &cq})
}

// PushReaction queues a message_reaction update: userID reacts with emoji to message
// msgID of the private chat chatID. It returns the update id.
func (s *Server) PushReaction(userID, chatID int64, msgID int, emoji string) int64 {
	r := Reaction(userID, chatID, msgID, emoji)
	return s.PushUpdate(models.Update{MessageReaction: &r})
}

// Pending returns the ids of the updates not yet confirmed.
func (s *Server) Pending() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, len(s.queue))
	for i, q := range s.queue {
		ids[i] = q.id
	}
	return ids
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

// Sent returns the messages sent successfully, in the order received.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// SentTo returns the messages sent to chat.
func (s *Server) SentTo(chat int64) []Message {
	return slices.DeleteFunc(s.Sent(), func(m Message) bool { return m.ChatID != chat })
}

// Polls returns the getUpdates calls answered or in progress.
func (s *Server) Polls() []Poll {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.polls)
}

// MaxPollOffset is the highest offset any getUpdates call has carried: every update below
// it is confirmed.
func (s *Server) MaxPollOffset() int64 {
	var m int64
	for _, p := range s.Polls() {
		m = max(m, p.Offset)
	}
	return m
}

// Webhooks returns the setWebhook calls that succeeded.
func (s *Server) Webhooks() []Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.webhooks)
}

// Actions returns the sendChatAction calls.
func (s *Server) Actions() []ChatAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.actions)
}

// CallbackAnswers returns the answerCallbackQuery calls.
func (s *Server) CallbackAnswers() []CallbackAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
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

// WaitSent waits until at least n messages were sent and returns them all.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Message, error) {
	var out []Message
	err := s.WaitFor(ctx, func() bool {
		out = s.Sent()
		return len(out) >= n
	})
	if err != nil {
		return out, fmt.Errorf("%d of %d messages sent: %w", len(out), n, err)
	}
	return out, nil
}

// WaitPollOffset waits until a getUpdates call carried an offset ≥ offset.
func (s *Server) WaitPollOffset(ctx context.Context, offset int64) error {
	return s.WaitFor(ctx, func() bool { return s.MaxPollOffset() >= offset })
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
