package openaitest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strings"
	"unicode"
)

// Embedding is one recorded /embeddings request.
type Embedding struct {
	Model      string
	Input      []string
	Dimensions int
}

// DefaultDimensions is the length of the fake's vectors when a request names none.
const DefaultDimensions = 256

// Synonyms is the default synonym table of the fake embeddings: the words of a group
// embed as one, so a test can show a meaning-based search finding a text that shares no
// word with the query ("my puppy" finds "the dog").
var Synonyms = [][]string{
	{"dog", "dogs", "puppy", "puppies", "hound"},
	{"car", "cars", "automobile", "vehicle"},
	{"doctor", "physician", "medic"},
	{"movie", "movies", "film", "films", "cinema"},
	{"happy", "glad", "joyful", "cheerful"},
	{"sad", "unhappy", "gloomy", "down"},
	{"job", "work", "career", "employment"},
	{"house", "home", "apartment", "flat"},
	{"trip", "journey", "travel", "vacation", "holiday"},
	{"guitar", "instrument"},
}

// SetEmbeddingModels restricts /embeddings to the given models: any other is answered
// 404, as OpenAI answers an unknown model. With no ids (the default) every model is
// served.
func (s *Server) SetEmbeddingModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedModels = slices.Clone(ids)
}

// SetEmbeddingStatus makes /embeddings answer every request with status (≥ 400) until it
// is set back to 0: an endpoint that fails.
func (s *Server) SetEmbeddingStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedStatus = status
}

// SetSynonyms replaces the synonym table (nil: Synonyms).
func (s *Server) SetSynonyms(groups [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synonyms = groups
}

// Embeddings returns the recorded /embeddings requests, in arrival order.
func (s *Server) Embeddings() []Embedding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.embedded)
}

// embeddings serves POST /v1/embeddings in OpenAI's shape: input a string or an array of
// strings, model required, dimensions optional. Each text's vector is a hashed bag of its
// words (synonyms as one word) projected to the dimensions and normalised, so texts that
// share words or meanings are close; the usage counts one token a word.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("bad JSON body: %v", err))
		return
	}
	var in []string
	if err := json.Unmarshal(body.Input, &in); err != nil {
		var one string
		if err := json.Unmarshal(body.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "input must be a string or an array of strings")
			return
		}
		in = []string{one}
	}
	s.mu.Lock()
	s.embedded = append(s.embedded, Embedding{Model: body.Model, Input: in, Dimensions: body.Dimensions})
	status, models, syn := s.embedStatus, s.embedModels, s.synonyms
	s.mu.Unlock()
	switch {
	case status >= 400:
		writeError(w, status, "server_error", "the embeddings endpoint failed")
		return
	case body.Model == "" || len(in) == 0 || body.Dimensions < 0 || body.EncodingFormat == "base64":
		writeError(w, http.StatusBadRequest, "invalid_request_error", "model and input are required (base64 is not served)")
		return
	case len(models) > 0 && !slices.Contains(models, body.Model):
		writeError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("The model `%s` does not exist", body.Model))
		return
	}
	if syn == nil {
		syn = Synonyms
	}
	dims := body.Dimensions
	if dims == 0 {
		dims = DefaultDimensions
	}
	type datum struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	data := make([]datum, len(in))
	tokens := 0
	for i, text := range in {
		v, n := FakeEmbedding(text, dims, syn)
		data[i] = datum{Object: "embedding", Embedding: v, Index: i}
		tokens += n
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": body.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// FakeEmbedding is the fake's vector of text in dims dimensions with the synonym groups
// syn, and its tokens (one a word). Words of two letters or fewer and a few function
// words are left out, as their weight would drown the rest.
func FakeEmbedding(text string, dims int, syn [][]string) ([]float32, int) {
	canon := map[string]string{}
	for _, g := range syn {
		for _, w := range g {
			canon[w] = g[0]
		}
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	v := make([]float64, dims)
	for _, w := range words {
		if len([]rune(w)) <= 2 || stopWords[w] {
			continue
		}
		if c, ok := canon[w]; ok {
			w = c
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		x := h.Sum64() | 1
		for i := range v {
			x ^= x << 13 // xorshift: a word's own pseudo-random ±1 direction
			x ^= x >> 7
			x ^= x << 17
			if x&1 == 0 {
				v[i]++
			} else {
				v[i]--
			}
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1 // no word: a fixed direction, far from every text with words
		return out, max(len(words), 1)
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out, max(len(words), 1)
}

var stopWords = map[string]bool{
	"the": true, "and": true, "you": true, "your": true, "for": true, "that": true, "this": true,
	"with": true, "was": true, "are": true, "have": true, "has": true, "what": true, "when": true,
	"did": true, "does": true, "how": true, "about": true, "from": true, "they": true, "but": true,
	"not": true, "its": true, "just": true, "been": true, "will": true,
}
