package innerlife

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins"
)

// ReasonDream is the wake reason of a dream run.
const ReasonDream = "dream"

// DreamEvery is the least time between two dreams of a chat, whatever its time zone does
// (a /timezone moved west each hour would otherwise bring dream_at round again and again).
const DreamEvery = 20 * time.Hour

// Jobs implements plugins.Scheduled: the nightly dream.
func (p *Plugin) Jobs() []plugins.Job {
	return []plugins.Job{{Name: "dream", At: p.cfg.DreamAt, Run: p.dream}}
}

// dream runs one dream for each private chat (of those whose dream_at it is, in the
// user's own zone) that has not dreamt in the last DreamEvery, where the user wrote since
// its last dream and
// whose user has been quiet for at least DreamMinQuiet, at most dreamParallel at once.
// A dream reads the day under the dream profile; its tools may write a digest entry, open
// concerns the day implied that no run opened (within the caps), touch or close concerns,
// fold journal entries older than a week into reflections (innerlife_reflect) and remember
// facts; anything it would send is dropped.
//
// A dream runs in its person's zone (due's, the zone whose dream_at it is), so the day it
// reads and the notes and check-in times it writes are on their clock, not the service's.
func (p *Plugin) dream(ctx context.Context, h plugins.Host, due time.Time, rels []brain.Relationship) error {
	loc := due.Location()
	now := p.clock.Now()
	sem := make(chan struct{}, dreamParallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, rel := range rels {
		if rel.Group || rel.Chat == 0 {
			continue
		}
		p.mu.Lock()
		last := p.dreamed[rel.Chat]
		p.mu.Unlock()
		if !last.IsZero() && now.Sub(last) < DreamEvery {
			continue // dreamt already today, in some zone
		}
		if !rel.LastUserMsg.After(last) {
			// The user wrote nothing since the last dream (anima's own unanswered
			// messages are not news): nothing to dream about, no cost.
			continue
		}
		if now.Sub(rel.LastUserMsg) < p.cfg.DreamMinQuiet.Std() {
			p.m.dreams.WithLabelValues(dreamSkipped).Inc()
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := p.dreamChat(ctx, h, rel, now, loc); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (p *Plugin) dreamChat(ctx context.Context, h plugins.Host, rel brain.Relationship, now time.Time, loc *time.Location) error {
	w := brain.Wake{Chat: rel.Chat, User: rel.User, Profile: brain.ProfileDream, Rel: rel, At: now, Loc: loc,
		Reason: brain.Reason{Code: ReasonDream, Text: "the night's reflection on the day's conversation, your journal and your concerns"}}
	out, err := h.Think(ctx, w)
	p.mu.Lock()
	delete(p.folding, subjectOf(rel.Chat, rel.User)) // the run is over: nothing more to fold
	p.mu.Unlock()
	p.m.dreamRequests.Add(float64(out.Requests))
	p.m.dreamRun.Observe(float64(out.Requests))
	if err != nil {
		p.m.dreams.WithLabelValues(dreamError).Inc()
		return fmt.Errorf("dream chat %d: %w", rel.Chat, err)
	}
	intents := make([]brain.Intent, 0, len(out.Intents)+1)
	for _, in := range out.Intents {
		if _, ok := in.(brain.SendMessage); ok {
			continue // a dream never sends anything
		}
		intents = append(intents, in)
	}
	intents = append(intents, change(rel.Chat, rel.User, dreamt{}))
	if err := h.Commit(ctx, rel.Chat, rel.User, intents, now); err != nil {
		p.m.dreams.WithLabelValues(dreamError).Inc()
		return fmt.Errorf("dream chat %d: %w", rel.Chat, err)
	}
	p.m.dreams.WithLabelValues(dreamOK).Inc()
	return nil
}
