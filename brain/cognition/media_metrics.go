package cognition

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// mediaMetrics measure perception: files by kind and outcome, and transcriptions.
type mediaMetrics struct {
	media         *prometheus.CounterVec
	transcription prometheus.Histogram
	audio         prometheus.Counter
}

func newMediaMetrics(reg prometheus.Registerer) *mediaMetrics {
	f := promauto.With(reg)
	return &mediaMetrics{
		media: f.NewCounterVec(prometheus.CounterOpts{
			Name: "anima_media_total",
			Help: "Files in user messages by kind (voice, audio, video_note, photo, document) and outcome (ok, refused, disabled, failed, limited).",
		}, []string{"kind", "outcome"}),
		transcription: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "anima_media_transcription_seconds",
			Help:    "Duration of successful transcription requests.",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
		}),
		audio: f.NewCounter(prometheus.CounterOpts{
			Name: "anima_media_audio_seconds_total",
			Help: "Seconds of audio transcribed.",
		}),
	}
}
