package cognition

import "github.com/prometheus/client_golang/prometheus"

// MediaCounter is anima_media_total{kind,outcome}, for tests.
func (c *Cognition) MediaCounter(kind, outcome string) prometheus.Counter {
	return c.m.media.WithLabelValues(kind, outcome)
}

// RequestCounter is anima_llm_requests_total{model,outcome}, for tests.
func (c *Cognition) RequestCounter(model, outcome string) prometheus.Counter {
	return c.m.requests.WithLabelValues(model, outcome)
}
