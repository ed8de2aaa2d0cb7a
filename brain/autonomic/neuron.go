package autonomic

import (
	"math"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Period is a part of the user's day.
type Period string

// Periods of the day, in the user's local time.
const (
	Night     Period = "night"     // 22:00–07:00
	Morning   Period = "morning"   // 07:00–12:00
	Afternoon Period = "afternoon" // 12:00–17:00
	Evening   Period = "evening"   // 17:00–22:00
)

// PeriodAt returns the period of t's wall-clock hour (convert t to the user's zone first).
func PeriodAt(t time.Time) Period {
	switch h := t.Hour(); {
	case h < 7 || h >= 22:
		return Night
	case h < 12:
		return Morning
	case h < 17:
		return Afternoon
	default:
		return Evening
	}
}

// periodAlertness is how awake anima feels in each period, before energy and activity.
func periodAlertness(p Period) float64 {
	switch p {
	case Morning:
		return 0.9
	case Afternoon:
		return 0.8
	case Evening:
		return 0.6
	default:
		return 0.2
	}
}

// zone is the default user zone of st.
func zone(st *brain.State) *time.Location { return st.Location(nil) }

// TimeOfDay emits a time_of_day signal (Ref: the period name) when the period of the day
// changes in the default user zone. The first check only records the period.
type TimeOfDay struct {
	period Period
}

var _ brain.Neuron = (*TimeOfDay)(nil)

// NewTimeOfDay returns the time-of-day neuron.
func NewTimeOfDay() *TimeOfDay { return &TimeOfDay{} }

// Name implements brain.Neuron.
func (*TimeOfDay) Name() string { return string(brain.SignalTimeOfDay) }

// Check implements brain.Neuron.
func (n *TimeOfDay) Check(now time.Time, st *brain.State) (brain.Signal, bool) {
	local := now.In(zone(st))
	p := PeriodAt(local)
	if p == n.period {
		return brain.Signal{}, false
	}
	first := n.period == ""
	n.period = p
	if first {
		return brain.Signal{}, false
	}
	return brain.Signal{Type: brain.SignalTimeOfDay, Source: n.Name(), Ref: string(p),
		Value: float64(local.Hour()) + float64(local.Minute())/60, At: now}, true
}

// EnergyConfig tunes the energy neuron.
type EnergyConfig struct {
	// DrainPerRun is the energy one cognition run costs (0.02).
	DrainPerRun float64
	// NightHalfLife is how long it takes at night to recover half the missing energy (1 h).
	NightHalfLife time.Duration
}

// Energy drains st.Energy by DrainPerRun for each cognition run counted in st.LLMWork
// (resetting the count) and recovers it toward 1 at night in the default user zone. It
// writes st.Energy on every check and emits an energy signal on a noticeable change or
// when energy crosses 0.2 (the proactive gate) either way.
type Energy struct {
	cfg  EnergyConfig
	det  Detector
	last time.Time
}

var _ brain.Neuron = (*Energy)(nil)

// NewEnergy returns the energy neuron; det is its detector's tuning (the 0.2 threshold is
// added).
func NewEnergy(cfg EnergyConfig, det DetectorConfig) *Energy {
	det.Thresholds = append([]Threshold{{Value: 0.2, Dir: Both}}, det.Thresholds...)
	return &Energy{cfg: cfg, det: NewDetector(det)}
}

// Name implements brain.Neuron.
func (*Energy) Name() string { return string(brain.SignalEnergy) }

// Check implements brain.Neuron.
func (n *Energy) Check(now time.Time, st *brain.State) (brain.Signal, bool) {
	e := st.Energy - n.cfg.DrainPerRun*float64(st.LLMWork)
	st.LLMWork = 0
	if !n.last.IsZero() && now.After(n.last) && n.cfg.NightHalfLife > 0 && PeriodAt(now.In(zone(st))) == Night {
		keep := math.Exp2(-float64(now.Sub(n.last)) / float64(n.cfg.NightHalfLife))
		e = 1 - (1-e)*keep
	}
	n.last = now
	e = min(1, max(0, e))
	st.Energy = e
	if emit, _ := n.det.Observe(now, e, st.Alertness); !emit {
		return brain.Signal{}, false
	}
	return brain.Signal{Type: brain.SignalEnergy, Source: n.Name(), Value: e, At: now}, true
}

// AlertnessConfig tunes the alertness neuron.
type AlertnessConfig struct {
	// ActivityHalfLife is how fast the lift of recent activity fades (30 min).
	ActivityHalfLife time.Duration
}

// Alertness computes st.Alertness from energy, recent activity and the time of day:
//
//	alertness = energy · (0.7·period + 0.3·activity)
//
// where period is 0.9 in the morning, 0.8 in the afternoon, 0.6 in the evening and 0.2 at
// night, and activity = 2^(−since_last_activity / ActivityHalfLife) (0 with no activity
// yet). It writes st.Alertness on every check and emits an alertness signal on a
// noticeable change.
type Alertness struct {
	cfg AlertnessConfig
	det Detector
}

var _ brain.Neuron = (*Alertness)(nil)

// NewAlertness returns the alertness neuron.
func NewAlertness(cfg AlertnessConfig, det DetectorConfig) *Alertness {
	return &Alertness{cfg: cfg, det: NewDetector(det)}
}

// Name implements brain.Neuron.
func (*Alertness) Name() string { return string(brain.SignalAlertness) }

// Check implements brain.Neuron.
func (n *Alertness) Check(now time.Time, st *brain.State) (brain.Signal, bool) {
	activity := 0.0
	if !st.LastActivity.IsZero() && n.cfg.ActivityHalfLife > 0 {
		since := max(0, now.Sub(st.LastActivity))
		activity = math.Exp2(-float64(since) / float64(n.cfg.ActivityHalfLife))
	}
	a := st.Energy * (0.7*periodAlertness(PeriodAt(now.In(zone(st)))) + 0.3*activity)
	a = min(1, max(0, a))
	st.Alertness = a
	if emit, _ := n.det.Observe(now, a, a); !emit {
		return brain.Signal{}, false
	}
	return brain.Signal{Type: brain.SignalAlertness, Source: n.Name(), Value: a, At: now}, true
}

// ThoughtConfig tunes the thought-pressure neuron.
type ThoughtConfig struct {
	// AgeUnit is the age at which a pending thought weighs twice as much as a fresh one (1 h).
	AgeUnit time.Duration
}

// ShareAgain is how long after raising a share that no message used the thought-pressure
// neuron may raise it again (the run chose silence, or the person wrote first).
const ShareAgain = 24 * time.Hour

// ShareScanEvery is how often the thought-pressure neuron looks through the relationships
// for a share to raise: a thought that waited a night may wait a minute more, and an idle
// tick stays a tick that does not walk every relationship.
const ShareScanEvery = time.Minute

// ThoughtPressure raises thought pressure for a chat whose relationship holds a thought
// anima might share (Relationship.Shares, left by the dream): a thought_pressure signal
// with the share's text, reason thought and the share's id as Ref, which the brain keeps
// as a gated thought until the aggregator's proactive gates (quiet hours, waking time,
// cooldown, the daily cap, deferrals) let it wake a proactive run that names it. A share
// is raised once per ShareAgain while it lives, never for a group or a dormant chat, nor
// while anima's last first message waits for an answer (a thought of its own does not
// follow an unanswered one: backing off is the silence rule's). One signal per check.
//
// Otherwise it measures pending (unhandled) thoughts and their age, agent-wide:
//
//	v = 1 − 2^(−Σ w),  w = (1 + age/AgeUnit) / 2 for each unhandled thought
//
// so one fresh thought gives 0.29, one an AgeUnit old or two fresh ones give 0.5. It emits
// a thought_pressure signal on a noticeable change and when v crosses 0.5 upward.
type ThoughtPressure struct {
	cfg     ThoughtConfig
	det     Detector
	scanned time.Time // the last look for a share to raise
}

var _ brain.Neuron = (*ThoughtPressure)(nil)

// NewThoughtPressure returns the thought-pressure neuron (the 0.5 upward threshold is
// added to det).
func NewThoughtPressure(cfg ThoughtConfig, det DetectorConfig) *ThoughtPressure {
	det.Thresholds = append([]Threshold{{Value: 0.5, Dir: Up}}, det.Thresholds...)
	return &ThoughtPressure{cfg: cfg, det: NewDetector(det)}
}

// Name implements brain.Neuron.
func (*ThoughtPressure) Name() string { return string(brain.SignalThoughtPressure) }

// Check implements brain.Neuron.
func (n *ThoughtPressure) Check(now time.Time, st *brain.State) (brain.Signal, bool) {
	if sig, ok := n.share(now, st); ok {
		return sig, true
	}
	sum := 0.0
	for i := range st.Thoughts {
		t := &st.Thoughts[i]
		if t.Handled {
			continue
		}
		age := 0.0
		if n.cfg.AgeUnit > 0 {
			age = float64(max(0, now.Sub(t.At))) / float64(n.cfg.AgeUnit)
		}
		sum += (1 + age) / 2
	}
	v := 1 - math.Exp2(-sum)
	if emit, _ := n.det.Observe(now, v, st.Alertness); !emit {
		return brain.Signal{}, false
	}
	return brain.Signal{Type: brain.SignalThoughtPressure, Source: n.Name(), Value: v, At: now}, true
}

// share raises the first share due to be raised, marking it raised; it looks once per
// ShareScanEvery (again at once after raising one: there may be more).
func (n *ThoughtPressure) share(now time.Time, st *brain.State) (brain.Signal, bool) {
	if !n.scanned.IsZero() && now.Sub(n.scanned) < ShareScanEvery && !now.Before(n.scanned) {
		return brain.Signal{}, false
	}
	n.scanned = now
	for _, rel := range st.Rels {
		if rel.Self == nil || rel.Group || rel.Dormant || rel.UnansweredProactive > 0 {
			continue
		}
		for _, s := range rel.Self.Shares {
			if !s.Live(now) || (!s.Raised.IsZero() && now.Sub(s.Raised) < ShareAgain) || pending(st, rel.Chat, s.ID) {
				continue
			}
			rel.MarkRaised(s.ID, now)
			n.scanned = time.Time{}
			return brain.Signal{Type: brain.SignalThoughtPressure, Source: n.Name(), Chat: rel.Chat, Text: s.Text,
				Ref: s.ID, Detail: brain.ReasonThought, Value: 1, At: now}, true
		}
	}
	return brain.Signal{}, false
}

// pending reports whether share id of chat waits in st as a gated thought.
func pending(st *brain.State, chat int64, id string) bool {
	for i := range st.Thoughts {
		if t := &st.Thoughts[i]; t.Gated && !t.Handled && t.Chat == chat && t.Ref == id {
			return true
		}
	}
	return false
}
