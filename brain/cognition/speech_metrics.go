package cognition

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// speechMetrics measure speaking; they exist only with a speech model.
type speechMetrics struct {
	requests *prometheus.CounterVec
	duration prometheus.Histogram
	chars    prometheus.Counter
	audio    prometheus.Counter
	bytes    prometheus.Counter
}

func newSpeechMetrics(reg prometheus.Registerer) *speechMetrics {
	f := promauto.With(reg)
	m := &speechMetrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_speech_requests_total",
			Help: "Replies to be spoken by outcome (ok, too_long, limited, failed, unsupported); only ok, failed and unsupported reached the endpoint.",
		}, []string{"outcome"}),
		duration: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "anima_speech_request_seconds",
			Help:    "Duration of speech requests, the audio read.",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
		}),
		chars: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_speech_characters_total",
			Help: "Characters spoken (and charged, a token each).",
		}),
		audio: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_speech_audio_seconds_total",
			Help: "Seconds of voice notes made.",
		}),
		bytes: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_speech_bytes_total",
			Help: "Bytes of Ogg/Opus voice notes made.",
		}),
	}
	for _, o := range []string{speechOK, speechTooLong, speechLimited, speechFailed, speechUnsupported} {
		m.requests.WithLabelValues(o)
	}
	return m
}
