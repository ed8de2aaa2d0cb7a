package aggregation

import (
	"time"

	"github.com/anima-bot/anima/brain"
)

// slots is the number of sub-windows a bucket's window is divided into: the window slides
// by one slot (a minute for the default 5-minute window).
const slots = 5

// BucketKey names a bucket: a signal type and source, and the chat for per-relationship
// signals (0 for agent-wide ones), so each relationship's pressure has its own bucket.
type BucketKey struct {
	Type   brain.SignalType
	Source string
	Chat   int64
}

// Bucket summarises the values of one signal key over the window ending now.
type Bucket struct {
	Key BucketKey
	// Latest is the most recent value, At its time.
	Latest float64
	At     time.Time
	// Min and Max are taken over the window.
	Min, Max float64
	// Trend is the latest value minus the earliest value in the window.
	Trend float64
	// Count is the number of signals in the window.
	Count int
}

type slot struct {
	epoch       int64 // slot number (unix nanos / slot width); 0 = empty
	first, last float64
	min, max    float64
	n           int
}

type bucket struct {
	latest   float64
	latestAt time.Time
	seen     time.Time // when the bucket was last fed (tick time), for the TTL
	ring     [slots]slot
}

// buckets folds signals into per-key windows.
type buckets struct {
	width time.Duration // slot width: window / slots
	ttl   time.Duration
	m     map[BucketKey]*bucket
}

func newBuckets(window, ttl time.Duration) buckets {
	return buckets{width: max(window/slots, 1), ttl: ttl, m: map[BucketKey]*bucket{}}
}

// observe folds s, seen at now, into its bucket. It allocates only for a new key.
func (bs *buckets) observe(now time.Time, s *brain.Signal) {
	k := BucketKey{Type: s.Type, Source: s.Source, Chat: s.Chat}
	b := bs.m[k]
	if b == nil {
		b = &bucket{}
		bs.m[k] = b
	}
	at := s.At
	if at.IsZero() {
		at = now
	}
	b.seen = now
	if !at.Before(b.latestAt) {
		b.latest, b.latestAt = s.Value, at
	}
	e := at.UnixNano()/int64(bs.width) + 1 // + 1 keeps 0 for "empty"
	sl := &b.ring[e%slots]
	switch {
	case sl.epoch == e:
		sl.last = s.Value
		sl.min = min(sl.min, s.Value)
		sl.max = max(sl.max, s.Value)
		sl.n++
	case sl.epoch < e:
		*sl = slot{epoch: e, first: s.Value, last: s.Value, min: s.Value, max: s.Value, n: 1}
	}
	// sl.epoch > e: older than the window the slot now holds; only latest saw it.
}

// stats summarises the bucket of k over the window ending at now.
func (bs *buckets) stats(now time.Time, k BucketKey) (Bucket, bool) {
	b := bs.m[k]
	if b == nil {
		return Bucket{}, false
	}
	out := Bucket{Key: k, Latest: b.latest, At: b.latestAt}
	cur := now.UnixNano()/int64(bs.width) + 1
	var firstEpoch, lastEpoch int64
	var first, last float64
	for i := range b.ring {
		sl := &b.ring[i]
		if sl.n == 0 || sl.epoch <= cur-slots || sl.epoch > cur {
			continue
		}
		if out.Count == 0 {
			out.Min, out.Max = sl.min, sl.max
		} else {
			out.Min, out.Max = min(out.Min, sl.min), max(out.Max, sl.max)
		}
		out.Count += sl.n
		if firstEpoch == 0 || sl.epoch < firstEpoch {
			firstEpoch, first = sl.epoch, sl.first
		}
		if sl.epoch > lastEpoch {
			lastEpoch, last = sl.epoch, sl.last
		}
	}
	if out.Count > 0 {
		out.Trend = last - first
	}
	return out, true
}

// prune drops buckets not fed for the TTL.
func (bs *buckets) prune(now time.Time) {
	for k, b := range bs.m {
		if now.Sub(b.seen) >= bs.ttl {
			delete(bs.m, k)
		}
	}
}
