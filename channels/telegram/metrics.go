package telegram

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Outcomes of a Bot API request (the outcome label of anima_telegram_requests_total).
const (
	outcomeOK          = "ok"
	outcomeError       = "error"
	outcomeRateLimited = "rate_limited"
	outcomeForbidden   = "forbidden"
	outcomeServerError = "server_error"
	outcomeNetwork     = "network"
)

// Update kinds (the kind label of anima_telegram_updates_total).
const (
	kindMessage  = "message"
	kindCommand  = "command"
	kindReaction = "reaction"
	// kindReactionOther is a reaction to a message anima did not send: ignored.
	kindReactionOther = "reaction_other"
	kindIgnored       = "ignored"
	kindUnauthorized  = "unauthorized"
	kindMalformed     = "malformed"
	kindDuplicate     = "duplicate"
)

type metrics struct {
	requests *prometheus.CounterVec
	updates  *prometheus.CounterVec
}

// newMetrics builds the channel's metrics on reg; a nil reg gives working but
// unregistered metrics.
func newMetrics(reg prometheus.Registerer) *metrics {
	f := promauto.With(reg)
	m := &metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_telegram_requests_total",
			Help: "Telegram Bot API requests by method and outcome.",
		}, []string{"method", "outcome"}),
		updates: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_telegram_updates_total",
			Help: "Telegram updates received, by what became of them.",
		}, []string{"kind"}),
	}
	// Known label values start at 0, so rates and dashboards see them before the first event.
	for _, k := range []string{kindMessage, kindCommand, kindReaction, kindReactionOther, kindIgnored, kindUnauthorized, kindMalformed, kindDuplicate} {
		m.updates.WithLabelValues(k)
	}
	return m
}

// knownMethods bounds the method label; anything else counts as "other".
var knownMethods = map[string]bool{
	"getUpdates": true, "getMe": true, "sendMessage": true, "sendChatAction": true,
	"deleteWebhook": true, "setWebhook": true, "answerCallbackQuery": true, "getFile": true,
	"sendMessageDraft": true,
}

// statusKey carries a *atomic.Int32 in a request context; the transport stores the HTTP
// status of the answer there (0 if no answer came), so callers can tell a 5xx from other
// errors the library does not type.
type statusKey struct{}

func withStatus(ctx context.Context, st *atomic.Int32) context.Context {
	return context.WithValue(ctx, statusKey{}, st)
}

// transport counts every Bot API request by method and outcome.
type transport struct {
	base http.RoundTripper
	met  *metrics
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:]
	switch {
	case strings.Contains(req.URL.Path, "/file/bot"):
		method = "download" // a file download, not a method
	case !knownMethods[method]:
		method = "other"
	}
	resp, err := t.base.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	if st, ok := req.Context().Value(statusKey{}).(*atomic.Int32); ok {
		st.Store(int32(status))
	}
	t.met.requests.WithLabelValues(method, outcomeOf(status)).Inc()
	return resp, err
}

func outcomeOf(status int) string {
	switch {
	case status == 0:
		return outcomeNetwork
	case status >= 200 && status < 300:
		return outcomeOK
	case status == http.StatusTooManyRequests:
		return outcomeRateLimited
	case status == http.StatusForbidden:
		return outcomeForbidden
	case status >= 500:
		return outcomeServerError
	default:
		return outcomeError
	}
}
