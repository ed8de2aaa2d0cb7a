package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// simModel is the offline scripted model: a fake OpenAI-compatible endpoint on 127.0.0.1
// (openaitest) that the real go-openai client and the real cognition code talk to. Before
// each cognition run the simulation tells it what kind of wake comes; it answers chat
// requests with a scripted reply for that wake and summary requests with a summary.
type simModel struct {
	srv *openaitest.Server
	sc  SimModel
	rng *rand.Rand

	mu        sync.Mutex // the server calls respond on its own goroutines
	next      openaitest.Reply
	calls     int // chat completion requests of cognition runs
	summaries int // requests of the memory summarizer
	n         int
}

// newSimModel starts the scripted model's endpoint; Close stops it.
func newSimModel(sc SimModel, rng *rand.Rand) (*simModel, error) {
	srv, err := openaitest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("sim model: %w", err)
	}
	m := &simModel{srv: srv, sc: sc, rng: rng}
	srv.SetDefault(m.respond)
	return m, nil
}

// Close stops the endpoint.
func (m *simModel) Close() { m.srv.Close() }

// URL is the endpoint's base URL for the OpenAI client.
func (m *simModel) URL() string { return m.srv.URL() }

// prepare scripts the answer to the next cognition run, for wake w.
func (m *simModel) prepare(w brain.Wake) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	switch w.Reason.Code {
	case brain.ReasonProactive, brain.ReasonFollowup:
		if m.rng.Float64() < m.sc.Silent {
			m.next = openaitest.Answer("", m.sc.ProactiveStatus, 0.9)
			return
		}
		m.next = openaitest.Answer(fmt.Sprintf("Thinking of you (%s #%d): how are things?", w.Reason.Code, m.n), m.sc.ProactiveStatus, 0.9)
	default:
		m.next = openaitest.Answer(fmt.Sprintf("Scripted answer #%d.", m.n), m.sc.ReplyStatus, 0.9)
	}
}

// respond answers one request: the memory summarizer gets a summary, cognition the
// scripted answer.
func (m *simModel) respond(req openai.ChatCompletionRequest) openaitest.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You keep the long-term memory") {
		m.summaries++
		return openaitest.Reply{Content: "The user and anima talk now and then; nothing is pending."}
	}
	m.calls++
	return m.next
}

// requests returns the number of requests answered so far: cognition's and the
// summarizer's.
func (m *simModel) requests() (calls, summaries int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, m.summaries
}

// violations are the protocol errors the endpoint saw in the client's requests.
func (m *simModel) violations() []string { return m.srv.Violations() }
