package sim

import (
	"io"
	"time"

	"github.com/anima-bot/anima/brain"
)

// Picture is what timeline.png shows of a scenario run, for Options.Draw (package
// bot/sim/plot draws it): the run's steps on the user's clock.
type Picture struct {
	Name  string         // the scenario's name
	Loc   *time.Location // the user's zone
	Start time.Time      // the first step
	Days  int
	Step  time.Duration
	// Threshold is the social pressure at which anima may write first after a silence of
	// MinSilence (proactive.min_silence): brain.Pressure(MinSilence, MinSilence), 0.5. It
	// is 0 when proactive contact is off. Unanswered first messages raise the silence
	// needed (habituation), and a closed conversation needs four times as long.
	Threshold  float64
	MinSilence time.Duration
	Steps      []PictureStep
}

// PictureStep is one step of the run as the picture shows it.
type PictureStep struct {
	At                     time.Time
	Pressure               float64  // social pressure after the step
	Quiet, Blocked, Active bool     // inside the quiet hours; the user has blocked the bot; inside the learned active hours
	Wakes                  []string // reason codes of the wakes
	Dreams                 int      // dream runs
	// Messages by column (the timeline's): the user's, anima's answers, proactive
	// messages (check-ins included), follow-ups, the rest (reminders, system messages),
	// and the check-ins among the proactive ones.
	User, Reply, Proactive, Followup, Other, Checkin int
}

// Drawer draws a run's Picture as timeline.png.
type Drawer func(w io.Writer, p Picture) error

// picture is the run as Options.Draw gets it.
func (t *timeline) picture() Picture {
	p := Picture{Name: t.sc.Name, Loc: t.loc, Start: t.start, Days: t.sc.Days, Step: t.sc.Step.Std(),
		Steps: make([]PictureStep, len(t.rows))}
	if t.pol.Enabled && t.pol.MaxPerDay > 0 {
		p.Threshold, p.MinSilence = brain.Pressure(t.pol.MinSilence, t.pol.MinSilence), t.pol.MinSilence
	}
	for i, r := range t.rows {
		p.Steps[i] = PictureStep{At: r.at, Pressure: r.pressure, Quiet: r.quiet, Blocked: r.blocked, Active: r.active,
			Wakes: r.wakes, Dreams: r.dreams, User: r.msgs[msgUser], Reply: r.msgs[msgReply], Proactive: r.msgs[msgProactive],
			Followup: r.msgs[msgFollowup], Other: r.msgs[msgOther], Checkin: r.checkin}
	}
	return p
}
