package innerlife

import (
	"container/heap"
	"time"

	"github.com/anima-bot/anima/brain"
)

// checkin is a pending check-in in the heap.
type checkin struct {
	at time.Time
	id string
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
// nothing. Each check-in is raised once per process; after a restart a check-in not yet
// asked is raised again.
type checkinNeuron struct{ p *Plugin }

func (checkinNeuron) Name() string { return "innerlife_checkin" }

func (n checkinNeuron) Check(now time.Time, _ *brain.State) (brain.Signal, bool) {
	p := n.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.due) > 0 && !now.Before(p.due[0].at) {
		top := p.due[0]
		heap.Pop(&p.due)
		c, ok := p.byID[top.id]
		if !ok || c.CheckInDone || !c.CheckInAt.Equal(top.at) {
			continue // closed, asked, or moved since it was pushed
		}
		return brain.Signal{Type: brain.SignalThoughtPressure, Source: Name, Chat: c.Chat, Text: c.Summary,
			Value: 1, At: now, Ref: c.ID, Detail: brain.ReasonConcernCheckin}, true
	}
	return brain.Signal{}, false
}
