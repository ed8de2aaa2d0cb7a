package sim

import (
	"context"

	"github.com/anima-bot/anima/bot/config"
)

// Estimate is what a live run of a scenario is expected to send to the model endpoint.
type Estimate struct {
	// Requests are the model requests of the dry run: cognition's (tool rounds and the
	// smart model's second try included), the dreams' and the memory summarizer's.
	Requests int
	// Bytes are their request bodies, prompts and tool definitions; about a quarter of
	// that in tokens.
	Bytes int64
}

// EstimateLive replays sc with the scripted model, writing nothing, and returns what the
// model client sent: what a live run (Options.Live) of the same scenario should spend,
// give or take what a real model does differently (it may call tools, stay silent or
// answer at length where the scripted model does not, and the user's random answers
// follow its choices).
func EstimateLive(ctx context.Context, cfg config.Config, sc Scenario, opts Options) (Estimate, error) {
	opts.Live = false
	tl, err := runScenario(ctx, cfg, sc, opts)
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{Requests: tl.requests, Bytes: tl.requestBytes}, nil
}
