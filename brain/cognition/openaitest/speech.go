package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anima-bot/anima/brain/ogg"
)

// Speech is one recorded /audio/speech request.
type Speech struct {
	Model        string  `json:"model"`
	Input        string  `json:"input"`
	Voice        string  `json:"voice"`
	Instructions string  `json:"instructions,omitempty"`
	Format       string  `json:"response_format,omitempty"` // "" is the default, mp3
	Speed        float64 `json:"speed,omitempty"`
}

// Speaker answers a speech request with its audio, or an HTTP status ≥ 400 (the audio,
// when not empty, is then the error's message).
type Speaker func(s Speech) (audio []byte, status int)

// Speak is the default Speaker: Ogg/Opus silence as long as a voice takes to read the
// input (15 characters a second, at least 20 ms), made by ogg.Silence — a valid file
// Telegram would play; other formats are refused as this fake cannot make them.
func Speak(s Speech) ([]byte, int) {
	if s.Format != "opus" {
		return []byte("this fake speaks only response_format opus"), http.StatusBadRequest
	}
	return ogg.Silence(time.Duration(utf8.RuneCountInString(s.Input)) * time.Second / 15), 0
}

// maxSpeechInput is OpenAI's limit on a speech request's input, in characters.
const maxSpeechInput = 4096

// SetSpeaker replaces the speaker (nil = Speak).
func (s *Server) SetSpeaker(f Speaker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.speak = f
}

// SpeechStream is a 200 answer to a speech request written as it goes, for endpoints that
// misbehave after their headers: a body that is not audio, one far too long, one that
// stalls.
type SpeechStream struct {
	// ContentType is the answer's Content-Type ("" is audio/ogg).
	ContentType string
	// Length, when > 0, is sent as Content-Length (which Body need not keep to); 0 sends
	// the body chunked.
	Length int64
	// Body is written after the headers (nil: nothing); the server stops writing when the
	// client goes away, so it may be endless (see Oversize).
	Body io.Reader
	// Stall, after Body, holds the answer open — headers sent, no end — until the client
	// gives up or the server closes.
	Stall bool
}

// SetSpeechStream makes f answer speech requests instead of the speaker (nil: the speaker
// answers again).
func (s *Server) SetSpeechStream(f func(Speech) SpeechStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.speechFlow = f
}

// Stalled answers a speech request with its headers and then nothing.
func Stalled(Speech) SpeechStream { return SpeechStream{Stall: true} }

// Oversize answers a speech request with an Ogg page's capture pattern followed by zeros,
// n bytes in all, made as they are written (the server holds none of it); declared sends
// n as the Content-Length, else the body is chunked.
func Oversize(n int64, declared bool) func(Speech) SpeechStream {
	return func(Speech) SpeechStream {
		st := SpeechStream{Body: io.MultiReader(strings.NewReader("OggS"), io.LimitReader(zeros{}, n-4))}
		if declared {
			st.Length = n
		}
		return st
	}
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// streamSpeech writes st.
func (s *Server) streamSpeech(w http.ResponseWriter, r *http.Request, st SpeechStream) {
	ct := st.ContentType
	if ct == "" {
		ct = "audio/ogg"
	}
	w.Header().Set("Content-Type", ct)
	if st.Length > 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(st.Length, 10))
	}
	w.WriteHeader(http.StatusOK)
	if st.Body != nil {
		if _, err := io.Copy(w, st.Body); err != nil {
			return // the client went away
		}
	}
	if !st.Stall {
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// Speeches returns the recorded speech requests, in arrival order.
func (s *Server) Speeches() []Speech {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Speech(nil), s.spoken...)
}

// speech serves POST /v1/audio/speech as OpenAI does: a JSON body with model, input (at
// most 4096 characters) and voice, and an optional response_format and speed; the
// answer is the audio itself.
func (s *Server) speech(w http.ResponseWriter, r *http.Request) {
	var sp Speech
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("bad JSON body: %v", err))
		return
	}
	var problems []string
	if sp.Model == "" {
		problems = append(problems, "model is missing")
	}
	if sp.Voice == "" {
		problems = append(problems, "voice is missing")
	}
	switch n := utf8.RuneCountInString(sp.Input); {
	case strings.TrimSpace(sp.Input) == "":
		problems = append(problems, "input is empty")
	case n > maxSpeechInput:
		problems = append(problems, fmt.Sprintf("input is %d characters, over %d", n, maxSpeechInput))
	}
	switch sp.Format {
	case "", "mp3", "opus", "aac", "flac", "wav", "pcm":
	default:
		problems = append(problems, fmt.Sprintf("response_format %q is not one of mp3, opus, aac, flac, wav, pcm", sp.Format))
	}
	s.mu.Lock()
	idx := len(s.spoken)
	s.spoken = append(s.spoken, sp)
	s.noteLocked("speech", idx, problems)
	speak, flow := s.speak, s.speechFlow
	s.mu.Unlock()
	if rejected(w, problems) {
		return
	}
	if flow != nil {
		s.streamSpeech(w, r, flow(sp))
		return
	}
	if speak == nil {
		speak = Speak
	}
	audio, status := speak(sp)
	if status >= 400 {
		writeFailure(w, status, "invalid_request_error", string(audio))
		return
	}
	w.Header().Set("Content-Type", "audio/ogg")
	_, _ = w.Write(audio)
}
