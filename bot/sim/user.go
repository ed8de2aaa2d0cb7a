package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
)

// simUser is the scripted person at the other end: it plans when they write on their
// own, decides whether and when they answer what anima sends, and receives anima's
// messages as the channel would (a loop.Sender), refusing them once they blocked the bot.
type simUser struct {
	sc    SimUser
	rng   *rand.Rand
	loc   *time.Location
	start time.Time // local midnight of day 1
	chat  int64

	now     time.Time   // set by the run before each step
	pending []time.Time // when the user will write next, ascending
	blockAt time.Time   // zero: never blocks
	quiet   map[int]bool
	told    map[int]bool // the days whose life (SimUser.Life) a message has said
	written int
	// own are the times of the messages the user writes of their own accord (the write
	// rules'), ascending: answers to anima are not among them.
	own []time.Time

	// received counts anima's messages that reached the user, by kind; refused counts the
	// sends refused because the user had blocked the bot.
	received map[brain.MessageKind]int
	refused  int
}

var _ loop.Sender = (*simUser)(nil)

// newSimUser plans the scripted user's own messages over days days from start.
func newSimUser(sc SimUser, rng *rand.Rand, loc *time.Location, start time.Time, days int, chat int64) *simUser {
	u := &simUser{sc: sc, rng: rng, loc: loc, start: start, chat: chat, quiet: map[int]bool{}, told: map[int]bool{},
		received: map[brain.MessageKind]int{}}
	for _, d := range sc.QuietDays {
		u.quiet[d] = true
	}
	if b := sc.Block; b != nil {
		at, _ := clockTime(b.At) // validated
		u.blockAt = u.dayStart(b.Day).Add(at)
	}
	for day := 1; day <= days; day++ {
		for _, w := range sc.Writes {
			if len(w.Days) > 0 && !slices.Contains(w.Days, day) {
				continue
			}
			// Every rule draws the same numbers whether or not it fires, so one rule's
			// chance does not shift another's times.
			roll, shift := u.rng.Float64(), u.rng.Float64()
			if u.quiet[day] || (w.Chance != nil && roll >= *w.Chance) {
				continue
			}
			of, _ := clockTime(w.At) // validated
			at := u.dayStart(day).Add(of)
			if j := w.Jitter.Std(); j > 0 {
				at = at.Add(time.Duration((2*shift - 1) * float64(j)))
			}
			for i := range w.Messages {
				u.planOwn(at.Add(time.Duration(i) * time.Minute))
			}
		}
	}
	return u
}

// dayStart is local midnight of day (1 = the first).
func (u *simUser) dayStart(day int) time.Time {
	return time.Date(u.start.Year(), u.start.Month(), u.start.Day()+day-1, 0, 0, 0, 0, u.loc)
}

// day is the day of the run (1 = the first) t falls on, in the user's zone.
func (u *simUser) day(t time.Time) int {
	l := t.In(u.loc)
	a := time.Date(u.start.Year(), u.start.Month(), u.start.Day(), 12, 0, 0, 0, time.UTC)
	b := time.Date(l.Year(), l.Month(), l.Day(), 12, 0, 0, 0, time.UTC)
	return int(b.Sub(a).Hours()/24) + 1
}

// blocked reports whether the user has blocked the bot at t.
func (u *simUser) blocked(t time.Time) bool { return !u.blockAt.IsZero() && !t.Before(u.blockAt) }

// plan adds a message the user will write at t; none after the block or on a quiet day.
func (u *simUser) plan(t time.Time) {
	if u.blocked(t) || u.quiet[u.day(t)] {
		return
	}
	i, _ := slices.BinarySearchFunc(u.pending, t, time.Time.Compare)
	u.pending = slices.Insert(u.pending, i, t)
}

// planOwn plans a message of the user's own accord at t (see plan) and keeps its time.
func (u *simUser) planOwn(t time.Time) {
	if u.blocked(t) || u.quiet[u.day(t)] {
		return
	}
	u.plan(t)
	i, _ := slices.BinarySearchFunc(u.own, t, time.Time.Compare)
	u.own = slices.Insert(u.own, i, t)
}

// due returns the user's messages written up to now, as signals, and drops them from the
// plan.
func (u *simUser) due(now time.Time) []brain.Signal {
	var sigs []brain.Signal
	for len(u.pending) > 0 && !u.pending[0].After(now) {
		at := u.pending[0]
		u.pending = u.pending[1:]
		u.written++
		text := fmt.Sprintf("message %d from %s", u.written, u.sc.Name)
		if l, ok := u.sc.lifeOn(u.day(at)); ok && !u.told[l.Day] {
			u.told[l.Day] = true // the day's first message says it
			text += ": " + l.Says
		}
		sigs = append(sigs, brain.Signal{Type: brain.SignalUserMessage, Source: "sim", Chat: u.chat, User: u.chat,
			UserName: u.sc.Name, Text: text, At: at})
	}
	return sigs
}

// Send receives one of anima's messages at the current simulated time: refused as
// blocked after the block, otherwise counted and perhaps answered later.
func (u *simUser) Send(_ context.Context, m brain.SendMessage) error {
	if u.blocked(u.now) {
		u.refused++
		return fmt.Errorf("sim user %d: %w", u.chat, brain.ErrBlocked)
	}
	u.received[m.Kind]++
	chance := u.sc.Answer.Reply
	if m.Kind == brain.KindProactive || m.Kind == brain.KindFollowup {
		chance = u.sc.Answer.Proactive
	}
	roll, wait := u.rng.Float64(), u.rng.Float64()
	if roll < chance {
		lo, hi := u.sc.Answer.MinDelay.Std(), u.sc.Answer.MaxDelay.Std()
		delay := lo + time.Duration(wait*float64(hi-lo))
		at := u.now.Add(delay)
		if u.sc.Sleep.Contains(at, u.loc) {
			at = u.sc.Sleep.NextEnd(at, u.loc).Add(delay) // read on waking
		}
		u.plan(at)
	}
	return nil
}
