package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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

// serveHTTP answers one request the way Telegram does, step by step: route the path,
// parse the parameters, wait out the latency, answer an injected fault, check the
// required parameters, then hand the call to the method's handler.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	ms, status := s.route(r.URL.Path)
	if status != http.StatusOK {
		writeJSON(w, status, apiResponse{ErrorCode: status, Description: http.StatusText(status)})
		return
	}
	params, files, err := parseParams(r)
	if err != nil {
		s.record(Call{Method: ms.Name, Params: params, At: at, Status: http.StatusBadRequest})
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: " + err.Error()})
		return
	}

	latency, fault := s.takeFault(ms.Name)
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
		s.record(Call{Method: ms.Name, Params: params, At: at, Status: fault.status()})
		fault.write(w)
		return
	}

	for _, f := range ms.Required {
		if strings.TrimSpace(params[f]) == "" {
			s.record(Call{Method: ms.Name, Params: params, At: at, Status: http.StatusBadRequest})
			writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: " + f + " is empty"})
			return
		}
	}

	result, aerr := s.dispatch(withUploads(r.Context(), files), ms.Name, params, at)
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

// route finds the method a /bot<token>/<method> path calls: 404 for a path of another
// shape or a method the spec does not list, 401 for a wrong token, 200 with the method.
func (s *Server) route(path string) (methodSpec, int) {
	rest, ok := strings.CutPrefix(path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return methodSpec{}, http.StatusNotFound
	}
	if token != s.Token {
		return methodSpec{}, http.StatusUnauthorized
	}
	ms, ok := s.spec[strings.ToLower(method)]
	if !ok {
		return methodSpec{}, http.StatusNotFound
	}
	return ms, http.StatusOK
}

// parseParams reads the parameters of a request: query string plus a JSON, multipart or
// url-encoded body. JSON strings become their value; other JSON values stay raw JSON. A
// multipart file is the parameter "attach://<name>", its upload in files.
func parseParams(r *http.Request) (params map[string]string, files map[string]Upload, err error) {
	params, err = parseFields(r, &files)
	return params, files, err
}

// parseFields is parseParams, the files it finds put in *files.
func parseFields(r *http.Request, files *map[string]Upload) (map[string]string, error) {
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
		for k, fhs := range r.MultipartForm.File {
			params[k] = "attach://" + k
			up, err := readUpload(fhs[len(fhs)-1])
			if err != nil {
				return params, fmt.Errorf("can't read the file %s", k)
			}
			if *files == nil {
				*files = map[string]Upload{}
			}
			(*files)[k] = up
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

// handler answers one Bot API method whose parameters passed the spec's checks.
type handler func(s *Server, ctx context.Context, p map[string]string, at time.Time) (any, *apiError)

// handlers are the methods the fake models, by canonical name; each lives in the file of
// its concern (updates, messages, webhook, members, media, draft).
var handlers = map[string]handler{
	"getFile": func(s *Server, _ context.Context, p map[string]string, _ time.Time) (any, *apiError) {
		return s.getFile(p)
	},
	"getMe": func(s *Server, _ context.Context, _ map[string]string, _ time.Time) (any, *apiError) {
		return s.Bot, nil
	},
	"getUpdates": (*Server).getUpdates,
	"sendMessage": func(s *Server, _ context.Context, p map[string]string, at time.Time) (any, *apiError) {
		return s.sendMessage(p, at)
	},
	"sendMessageDraft": func(s *Server, _ context.Context, p map[string]string, at time.Time) (any, *apiError) {
		return s.sendMessageDraft(p, at)
	},
	"sendVoice": (*Server).sendVoice,
	"sendChatAction": func(s *Server, _ context.Context, p map[string]string, at time.Time) (any, *apiError) {
		return s.sendChatAction(p, at)
	},
	"setWebhook": func(s *Server, _ context.Context, p map[string]string, at time.Time) (any, *apiError) {
		return s.setWebhook(p, at)
	},
	"deleteWebhook": func(s *Server, _ context.Context, p map[string]string, _ time.Time) (any, *apiError) {
		return s.deleteWebhook(p)
	},
	"getChatMember": func(s *Server, _ context.Context, p map[string]string, _ time.Time) (any, *apiError) {
		return s.getChatMember(p)
	},
	"answerCallbackQuery": func(s *Server, _ context.Context, p map[string]string, at time.Time) (any, *apiError) {
		return s.answerCallbackQuery(p, at)
	},
}

// dispatch hands a call to its method's handler. A method the fake does not model
// succeeds, so tests can still see the call.
func (s *Server) dispatch(ctx context.Context, method string, p map[string]string, at time.Time) (any, *apiError) {
	h, ok := handlers[method]
	if !ok {
		return true, nil
	}
	return h(s, ctx, p, at)
}

// chatID reads the chat_id parameter; an @username stands for chat 0.
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
