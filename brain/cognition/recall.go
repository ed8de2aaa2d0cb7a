package cognition

import (
	"context"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/prompt"
)

// What memory is searched for: a user's message is its own query; a proactive wake
// searches for what prompt.Query makes of it.

// remember gathers what a run shows besides the wake: the plugins' sections and the memory
// recalled for w (none when recall fails: the run goes on without memory).
func (c *Cognition) remember(ctx context.Context, w brain.Wake) brain.Recall {
	var secs []brain.Section
	if c.sects != nil {
		secs = c.sects(w, c.clock.Now())
	}
	var rc brain.Recall
	if c.mem != nil {
		var err error
		rc, err = c.recall(ctx, w, secs)
		if err != nil {
			c.log.Warn("recall failed, thinking without memory", "chat", w.Chat, "err", err)
			rc = brain.Recall{}
		}
	}
	rc.Sections = secs
	return rc
}

// recall gathers the run's memory for w, the plugins' sections already in hand.
func (c *Cognition) recall(ctx context.Context, w brain.Wake, secs []brain.Section) (brain.Recall, error) {
	if q := prompt.UserText(w); q != "" || w.Profile != brain.ProfileProactive {
		if q == "" {
			q = w.Reason.Text
		}
		return c.mem.Recall(ctx, w.Chat, w.User, q, c.cfg.ContextTokens)
	}
	// The turns first (no search), then the search on what they and the sections are about.
	rc, err := c.mem.Recall(ctx, w.Chat, w.User, "", c.cfg.ContextTokens)
	if err != nil {
		return rc, err
	}
	q := prompt.Query(w, rc.Turns, secs)
	if q == "" {
		return rc, nil
	}
	return c.mem.Recall(ctx, w.Chat, w.User, q, c.cfg.ContextTokens)
}
