package loop

import "github.com/anima-bot/anima/brain"

// StateStore persists relationships and acks between runs.
type StateStore interface {
	SaveRelationships(rels []brain.Relationship) error
	SaveAcks(acks []brain.Ack) error
	// DeleteRelationship removes a forgotten chat's relationship.
	DeleteRelationship(chat int64) error
}

// changes are what changed in the loop's state since the last flush.
type changes struct {
	rels map[int64]bool // chats whose relationship changed
	acks bool
	// forgotten are chats whose relationship the persister must delete.
	forgotten []int64
}

func newChanges() *changes { return &changes{rels: map[int64]bool{}} }

func (c *changes) empty() bool { return len(c.rels) == 0 && !c.acks && len(c.forgotten) == 0 }

func (c *changes) reset() {
	clear(c.rels)
	c.acks = false
	c.forgotten = nil
}

// persistJob is a snapshot of state to write: the loop builds it, the persister writes it,
// so the tick never waits for the disk.
type persistJob struct {
	deletes []int64 // forgotten chats, removed before the saves
	rels    []brain.Relationship
	acks    []brain.Ack
	ackSave bool
}

// flush hands changed relationships, acks and forgotten chats to the persister. If the
// persister is still busy with the last snapshot, the changes stay for the next flush;
// wait (on stop) blocks until it is taken.
func (l *Loop) flush(wait bool) {
	if l.deps.StateStore == nil || l.changed.empty() {
		return
	}
	job := persistJob{deletes: l.changed.forgotten, ackSave: l.changed.acks}
	for chat := range l.changed.rels {
		if r := l.st.Rel(chat); r != nil {
			job.rels = append(job.rels, *r)
		}
	}
	if l.changed.acks {
		job.acks = l.deps.Aggregator.Acks(l.deps.Clock.Now())
	}
	if wait {
		l.persist <- job
	} else {
		select {
		case l.persist <- job:
		default:
			return
		}
	}
	l.changed.reset()
}

// persister writes the snapshots flush hands it, until the channel closes.
func (l *Loop) persister(jobs <-chan persistJob) {
	for job := range jobs {
		for _, chat := range job.deletes {
			if err := l.deps.StateStore.DeleteRelationship(chat); err != nil {
				l.log.Error("delete forgotten relationship", "err", err)
			}
		}
		if len(job.rels) > 0 {
			if err := l.deps.StateStore.SaveRelationships(job.rels); err != nil {
				l.log.Error("save relationships", "err", err)
			}
		}
		if job.ackSave {
			if err := l.deps.StateStore.SaveAcks(job.acks); err != nil {
				l.log.Error("save acks", "err", err)
			}
		}
	}
}
