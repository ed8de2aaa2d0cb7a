package memory

import (
	"encoding/binary"
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// MetricsSummaries exposes the summaries counter to the tests.
func (m *Memory) MetricsSummaries(result string) prometheus.Counter {
	return m.metrics.summaries.WithLabelValues(result)
}

// VectorRecord returns the stored record (seq, scale, components) of chat's turn seq, nil
// if it has no vector.
func (m *Memory) VectorRecord(chat int64, seq uint64) ([]byte, error) {
	var out []byte
	err := m.st.View(func(tx Tx) error {
		st, err := loadVecStats(tx, chat)
		if err != nil {
			return err
		}
		for _, b := range st.Blocks {
			v, err := tx.PeekBlob(brain.BucketIndex, vecBlockKey(chat, b.ID))
			if err != nil {
				return err
			}
			err = eachRecord(v, st.Dims, func(s uint64, scale float32, q []byte) {
				if s == seq {
					out = binary.BigEndian.AppendUint64(nil, s)
					out = binary.BigEndian.AppendUint32(out, math.Float32bits(scale))
					out = append(out, q...)
				}
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// MetricsEmbedRequests exposes the embedding requests counter to the tests.
func (m *Memory) MetricsEmbedRequests(purpose, result string) prometheus.Counter {
	return m.metrics.embedRequests.WithLabelValues(purpose, result)
}

// Quantize exposes quantize and the cosine its record gives with a normalised query.
func Quantize(v, query []float32) float64 {
	r := quantize(1, v)
	q := make([]byte, len(r.q))
	for i, x := range r.q {
		q[i] = byte(x)
	}
	return dot(normalized(query), r.scale, q)
}
