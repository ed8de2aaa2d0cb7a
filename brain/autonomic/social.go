package autonomic

import (
	"time"

	"github.com/anima-bot/anima/brain"
)

// chatDetector is the detector state of one relationship, with the wall-clock reading
// (brain.Waking.Wall) of its last exchange and the time asleep up to it (AsleepTo), for
// the waking time it was read in, kept so that an idle check looks no zone up and walks
// no day for it.
type chatDetector struct {
	chat       int64
	det        Detector
	last       time.Time
	waking     brain.Waking
	lastWall   int64
	lastAsleep int64
}

// SocialPressure computes each relationship's social pressure from its silence counted in
// the user's waking time (brain.Pressure(waking silence, MinSilence); see brain.Waking:
// quiet hours, and once the rhythm is Ready inferred sleep, add nothing), writes it to rel.SocialPressure on every check, and
// emits a social_pressure signal for the chat on a noticeable change and whenever the
// pressure crosses 0.5 upward. Group and dormant chats and chats with no exchange yet have
// pressure 0 and emit nothing.
//
// Detector state lives in a slice parallel to st.Rels (which is sorted by chat); it is
// rebuilt only when the set of relationships changes, so an idle check allocates nothing.
type SocialPressure struct {
	minSilence time.Duration
	quiet      brain.QuietHours
	cfg        DetectorConfig
	dets       []chatDetector
	spare      []chatDetector // the previous dets, reused on the next rebuild
	pending    []brain.Signal // emissions not yet handed out by Check
	head       int
}

var _ brain.Neuron = (*SocialPressure)(nil)

// NewSocialPressure returns the social-pressure neuron for proactive min_silence and
// quiet_hours (the 0.5 upward threshold is added to det).
func NewSocialPressure(minSilence time.Duration, quiet brain.QuietHours, det DetectorConfig) *SocialPressure {
	det.Thresholds = append([]Threshold{{Value: 0.5, Dir: Up}}, det.Thresholds...)
	return &SocialPressure{minSilence: minSilence, quiet: quiet, cfg: det}
}

// Name implements brain.Neuron.
func (*SocialPressure) Name() string { return string(brain.SignalSocialPressure) }

// Check implements brain.Neuron for callers that know only that interface: it hands out
// this neuron's emissions one per call (call until it returns false to get them all).
// Layer uses Sense instead.
func (n *SocialPressure) Check(now time.Time, st *brain.State) (brain.Signal, bool) {
	if n.head >= len(n.pending) {
		n.pending = n.Sense(now, st, n.pending[:0])
		n.head = 0
		if len(n.pending) == 0 {
			return brain.Signal{}, false
		}
	}
	s := n.pending[n.head]
	n.head++
	return s, true
}

// Sense checks every relationship and appends its emissions to out.
func (n *SocialPressure) Sense(now time.Time, st *brain.State, out []brain.Signal) []brain.Signal {
	if len(n.dets) != len(st.Rels) {
		n.sync(st)
	}
	// now's wall-clock reading, looked up once per zone in a row of relationships (most
	// share the default zone), and the time asleep up to it, once per waking time in a row
	// (most share the quiet hours alone: no rhythm Ready yet, or the same sleep).
	var nowLoc *time.Location
	var nowWall, nowAsleep int64
	var nowWaking brain.Waking // the zero Waking is no relationship's (NewWaking sets a zone)
	for i, rel := range st.Rels {
		d := &n.dets[i]
		if d.chat != rel.Chat {
			n.sync(st)
			d = &n.dets[i]
		}
		last := rel.LastExchange()
		if rel.Group || rel.Dormant || last.IsZero() {
			rel.SocialPressure = 0
			continue
		}
		loc := st.Location(rel)
		w := brain.NewWaking(n.quiet, &rel.Rhythm, loc)
		if loc != nowLoc {
			nowLoc, nowWall = loc, w.Wall(now)
		}
		if w != nowWaking { // a new zone is a new waking time too
			nowWaking, nowAsleep = w, w.AsleepTo(nowWall)
		}
		if w != d.waking || !last.Equal(d.last) {
			d.last, d.waking, d.lastWall = last, w, w.Wall(last)
			d.lastAsleep = w.AsleepTo(d.lastWall)
		}
		p := brain.Pressure(brain.AwakeBetween(d.lastWall, d.lastAsleep, nowWall, nowAsleep), n.minSilence)
		rel.SocialPressure = p
		if emit, _ := d.det.Observe(now, p, st.Alertness); emit {
			out = append(out, brain.Signal{Type: brain.SignalSocialPressure, Source: n.Name(),
				Chat: rel.Chat, User: rel.User, Value: p, At: now})
		}
	}
	return out
}

// appended reports whether rels is dets' chats, in order, followed by more.
func appended(dets []chatDetector, rels []*brain.Relationship) bool {
	if len(rels) <= len(dets) {
		return false
	}
	for i := range dets {
		if dets[i].chat != rels[i].Chat {
			return false
		}
	}
	return true
}

// sync rebuilds dets to match st.Rels, keeping the detector state of chats that remain.
func (n *SocialPressure) sync(st *brain.State) {
	old := n.dets
	if appended(old, st.Rels) {
		// The usual change, a new relationship at the end: keep every detector in place.
		for _, rel := range st.Rels[len(old):] {
			n.dets = append(n.dets, chatDetector{chat: rel.Chat, det: NewDetector(n.cfg)})
		}
		return
	}
	next := n.spare[:0]
	if cap(next) < len(st.Rels) {
		next = make([]chatDetector, 0, len(st.Rels)+len(st.Rels)/4)
	}
	idx := make(map[int64]int, len(old))
	for i := range old {
		idx[old[i].chat] = i
	}
	for _, rel := range st.Rels {
		if i, ok := idx[rel.Chat]; ok {
			next = append(next, old[i])
			continue
		}
		next = append(next, chatDetector{chat: rel.Chat, det: NewDetector(n.cfg)})
	}
	n.dets, n.spare = next, old
}
