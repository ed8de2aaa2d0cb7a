package openaitest

import (
	"encoding/json"
	"net/http"
)

// SetModels sets the models GET /models lists. Until it is called the endpoint answers
// 404, as some OpenAI-compatible servers do.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed = append([]string{}, ids...)
}

// SetKey makes the server answer 401 to every request whose Authorization header is not
// "Bearer key", as OpenAI does for a wrong key; "" (the default) accepts any.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// models answers GET /models in OpenAI's shape.
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	ids := s.listed
	s.mu.Unlock()
	if ids == nil {
		writeError(w, http.StatusNotFound, "not_found", "404 page not found")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", OwnedBy: "openaitest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// checkKey refuses requests without the key SetKey set.
func (s *Server) checkKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		key := s.key
		s.mu.Unlock()
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
			return
		}
		next.ServeHTTP(w, r)
	})
}
