package innerlife

import (
	"container/heap"
	"time"

	"github.com/anima-bot/anima/brain"
)

// RecheckAfter is how long after raising a check-in the neuron looks at it again. If by
// then it was not asked (its run failed, say) and it no longer waits in the state as a
// gated thought, nor was shown to a run in the meantime, it is raised again.
const RecheckAfter = 10 * time.Minute

// checkin is a pending check-in in the heap: look at concern id at at; planned is the
// check-in time it was pushed for (a check-in moved since is dropped).
type checkin struct {
	at      time.Time
	planned time.Time
	id      string
}

// checkinHeap orders pending check-ins by time (earliest first).
type checkinHeap []checkin

func (h checkinHeap) Len() int           { return len(h) }
func (h checkinHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h checkinHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *checkinHeap) Push(x any)        { *h = append(*h, x.(checkin)) }
func (h *checkinHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// checkinNeuron raises thought pressure for a chat when one of its check-ins comes due:
// a thought_pressure signal with the concern's summary, which the brain keeps as a gated
// thought until the aggregator's proactive gates let it wake cognition (reason
// concern_checkin). On an idle tick it looks at the earliest check-in only, allocating
// nothing.
//
// A raised check-in is looked at again every RecheckAfter until it is asked: while it
// waits as a gated thought (a gate holds it) or was shown to a run within RecheckAfter
// (the run may still be going), nothing more is raised; otherwise the run that carried it
// failed, and it is raised again — in the same process, not only after a restart (when
// every check-in not yet asked is pushed again by Load).
type checkinNeuron struct{ p *Plugin }

func (checkinNeuron) Name() string { return "innerlife_checkin" }

func (n checkinNeuron) Check(now time.Time, st *brain.State) (brain.Signal, bool) {
	p := n.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.due) > 0 && !now.Before(p.due[0].at) {
		top := heap.Pop(&p.due).(checkin)
		c, ok := p.byID[top.id]
		if !ok || c.CheckInDone || !c.CheckInAt.Equal(top.planned) {
			continue // closed, asked, or moved since it was pushed
		}
		again := top.at.After(top.planned)
		heap.Push(&p.due, checkin{at: now.Add(RecheckAfter), planned: top.planned, id: top.id})
		if waiting(st, c) || now.Sub(p.shown[c.ID]) < RecheckAfter {
			continue
		}
		if again {
			p.m.raised[1].Inc()
		} else {
			p.m.raised[0].Inc()
		}
		return brain.Signal{Type: brain.SignalThoughtPressure, Source: Name, Chat: c.Chat, Text: c.Summary,
			Value: 1, At: now, Ref: c.ID, Detail: brain.ReasonConcernCheckin}, true
	}
	return brain.Signal{}, false
}

// waiting reports whether c's check-in waits in st as a gated thought.
func waiting(st *brain.State, c *Concern) bool {
	if st == nil {
		return false
	}
	for i := range st.Thoughts {
		if t := &st.Thoughts[i]; t.Gated && !t.Handled && t.Chat == c.Chat && t.Ref == c.ID {
			return true
		}
	}
	return false
}
