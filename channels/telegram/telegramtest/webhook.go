package telegramtest

import (
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Webhook is a setWebhook call.
type Webhook struct {
	URL            string
	SecretToken    string
	AllowedUpdates []string
	MaxConnections int
	At             time.Time
}

// Webhooks returns the setWebhook calls that succeeded.
func (s *Server) Webhooks() []Webhook { return snapshot(s, &s.webhooks) }

// setWebhook checks and records a webhook; while one is set, getUpdates answers 409.
func (s *Server) setWebhook(p map[string]string, at time.Time) (any, *apiError) {
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
}

// deleteWebhook removes the webhook, and the pending updates with drop_pending_updates.
func (s *Server) deleteWebhook(p map[string]string) (any, *apiError) {
	s.mu.Lock()
	s.webhookURL = ""
	if p["drop_pending_updates"] == "true" {
		s.queue = nil
	}
	s.mu.Unlock()
	return true, nil
}
