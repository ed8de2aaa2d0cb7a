package cognition

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain/metric"
)

// speechMetrics measure speaking; they exist only with a speech model.
type speechMetrics struct {
	requests *prometheus.CounterVec
	duration prometheus.Histogram
	chars    prometheus.Counter
	audio    prometheus.Counter
	bytes    prometheus.Counter
	// breakerOpen is 1 while the speech breaker is open; off is 1 once speech is off.
	breakerOpen prometheus.Gauge
	off         prometheus.Gauge
}

func newSpeechMetrics(reg prometheus.Registerer) *speechMetrics {
	f := metric.With(reg)
	return &speechMetrics{
		requests: metric.Known(f.CounterVec("anima_speech_requests_total",
			"Replies to be spoken by outcome (ok, too_long, limited, failed, unsupported, unavailable); only ok, failed and unsupported reached the endpoint.", "outcome"),
			speechOK, speechTooLong, speechLimited, speechFailed, speechUnsupported, speechUnavailable),
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
