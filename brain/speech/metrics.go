package speech

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/metric"
)

// metrics measure speaking; they exist only with a speech model (a Speech).
type metrics struct {
	requests *prometheus.CounterVec
	duration prometheus.Histogram
	chars    prometheus.Counter
	audio    prometheus.Counter
	bytes    prometheus.Counter
	// breakerOpen is 1 while the speech breaker is open; off is 1 once speech is off.
	breakerOpen prometheus.Gauge
	off         prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	f := metric.With(reg)
	return &metrics{
		requests: metric.Known(f.CounterVec("anima_speech_requests_total",
			"Replies to be spoken by outcome (ok, too_long, limited, failed, unsupported, unavailable); only ok, failed and unsupported reached the endpoint.", "outcome"),
			outcomeOK, outcomeTooLong, outcomeLimited, outcomeFailed, outcomeUnsupported, outcomeUnavailable),
		duration: f.Histogram("anima_speech_request_seconds",
			"Duration of speech requests, the audio read.", []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}),
		chars: f.Counter("anima_speech_characters_total", "Characters spoken (and charged, a token each)."),
		audio: f.Counter("anima_speech_audio_seconds_total", "Seconds of voice notes made."),
		bytes: f.Counter("anima_speech_bytes_total", "Bytes of Ogg/Opus voice notes made."),
		breakerOpen: f.Gauge("anima_speech_breaker_open",
			"1 while the speech circuit breaker is open (replies go as text but for a probe now and then), else 0."),
		off: f.Gauge("anima_speech_off",
			"1 once the endpoint's answers said in a row that it cannot speak: replies go as text until restart."),
	}
}
