package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Transcription is one recorded /audio/transcriptions request.
type Transcription struct {
	Model    string
	FileName string // the multipart file name (the endpoint tells the format by it)
	Audio    []byte
	Format   string // response_format, "" for the default (json)
}

// Transcriber answers a transcription request with its text, or an HTTP status ≥ 400
// (the text, when not empty, is then the error's message: endpoints may echo what they
// heard).
type Transcriber func(t Transcription) (text string, status int)

// Hear is the default Transcriber: the "audio" is heard as the words it spells when it is
// UTF-8 text (so a test writes a voice note as the sentence it says), else "(inaudible)".
func Hear(t Transcription) (string, int) {
	if utf8.Valid(t.Audio) {
		return strings.TrimSpace(string(t.Audio)), 0
	}
	return "(inaudible)", 0
}

// SetTranscriber replaces the transcriber (nil = Hear).
func (s *Server) SetTranscriber(f Transcriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hear = f
}

// Transcriptions returns the recorded transcription requests, in arrival order.
func (s *Server) Transcriptions() []Transcription {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Transcription(nil), s.heard...)
}

// transcription serves POST /v1/audio/transcriptions as OpenAI does: a multipart form
// with file and model (both required) and optional response_format.
func (s *Server) transcription(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "want a multipart/form-data body")
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("bad multipart body: %v", err))
		return
	}
	t := Transcription{Model: r.FormValue("model"), Format: r.FormValue("response_format")}
	file, hdr, err := r.FormFile("file")
	if err == nil {
		t.FileName = hdr.Filename
		t.Audio, err = io.ReadAll(file)
		_ = file.Close()
	}
	var problems []string
	switch {
	case err != nil:
		problems = append(problems, "file is missing")
	case len(t.Audio) == 0:
		problems = append(problems, "file is empty")
	case !audioExt(t.FileName):
		problems = append(problems, fmt.Sprintf("file name %q has no supported audio extension", t.FileName))
	}
	if t.Model == "" {
		problems = append(problems, "model is missing")
	}
	s.mu.Lock()
	idx := len(s.heard)
	s.heard = append(s.heard, t)
	s.noteLocked("transcription", idx, problems)
	hear := s.hear
	s.mu.Unlock()
	if rejected(w, problems) {
		return
	}
	if hear == nil {
		hear = Hear
	}
	text, status := hear(t)
	if status >= 400 {
		writeFailure(w, status, "server_error", text)
		return
	}
	if t.Format == "text" {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, text)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"text": text})
}

// audioExt reports whether name ends in an extension OpenAI's transcription accepts.
func audioExt(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return false
	}
	switch strings.ToLower(name[i+1:]) {
	case "flac", "mp3", "mp4", "mpeg", "mpga", "m4a", "ogg", "wav", "webm":
		return true
	}
	return false
}

// Contains reports whether sub appears anywhere in a request the server received — its
// path and query, its headers or its body — so a test can assert that a secret never
// reaches the model endpoint.
func (s *Server) Contains(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, raw := range s.wire {
		if bytes.Contains(raw, []byte(sub)) {
			return true
		}
	}
	return false
}

// recordWire keeps every request as it arrived (request line, headers, body) for Contains.
func (s *Server) recordWire(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
		_ = r.Header.Write(&b)
		b.Write(body)
		s.mu.Lock()
		s.wire = append(s.wire, b.Bytes())
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
