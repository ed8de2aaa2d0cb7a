package prompt_test

import (
	"slices"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/prompt"
)

var t0 = braintest.T0 // a Friday

// toolConcern is the inner life's tool for concerns; the persona of a chat run that offers
// it says when to open one.
const toolConcern = "innerlife_concern"

// The tokens the tool definitions of cognition's offers take, as its registry counts them
// (prompt.SpecTokens): core_escalate and core_defer (chat and proactive runs; a dream has
// neither), and innerlife_concern as the tests register it. The golden prompts were
// written with them.
const (
	coreTokens    = 197
	concernTokens = 57
)

// offer is a run's tool offer as cognition's registry makes it.
type offer struct {
	tokens int
	names  []string
}

func (o offer) Tokens() int             { return o.tokens }
func (o offer) Offers(name string) bool { return slices.Contains(o.names, name) }

// offerOf is what a run of profile p offers: the core tools but in a dream, and the
// concern tool when concern.
func offerOf(p brain.Profile, concern bool) offer {
	var o offer
	if p != brain.ProfileDream {
		o = offer{tokens: coreTokens, names: []string{"core_escalate", "core_defer"}}
	}
	if concern {
		o.tokens += concernTokens
		o.names = append(o.names, toolConcern)
	}
	return o
}

// env builds prompts as cognition does under the tests' configuration.
type env struct {
	b       *prompt.Builder
	concern bool // the concern tool is registered
}

type setup struct {
	cfg     func(*prompt.Config)
	concern bool
}

func newEnv(t testing.TB, s setup) *env {
	t.Helper()
	cfg := prompt.Config{ContextTokens: 6000, PersonaName: "Mira", PersonaDescription: "A warm, curious companion."}
	if s.cfg != nil {
		s.cfg(&cfg)
	}
	return &env{b: prompt.New(cfg), concern: s.concern}
}

// build is the prompt of a run for w at now, as cognition starts it: in the wake's zone
// (UTC without one), with its profile's offer.
func (e *env) build(w brain.Wake, rc brain.Recall, now time.Time) []openai.ChatCompletionMessage {
	loc := w.Loc
	if loc == nil {
		loc = time.UTC
	}
	p := w.Profile
	if p == "" {
		p = brain.ProfileChat
	}
	return e.b.Build(prompt.Run{Wake: w, Recall: rc, Now: now, Loc: loc, Offer: offerOf(p, e.concern)})
}

func userWake(texts ...string) brain.Wake { return braintest.UserWake(texts...) }

func proactiveWake() brain.Wake { return braintest.ProactiveWake() }

func promptText(msgs []openai.ChatCompletionMessage) string { return braintest.PromptText(msgs) }

func systemText(msgs []openai.ChatCompletionMessage) string { return braintest.SystemText(msgs) }
