package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// simModel is the offline scripted model: a fake OpenAI-compatible endpoint on 127.0.0.1
// (openaitest) that the real go-openai client and the real cognition code talk to. Before
// each cognition run the simulation tells it what kind of wake comes; it answers chat
// requests with a scripted reply for that wake (a tool call first when it opens the
// scenario's concern; an empty answer for a dream) and summary requests with a summary.
type simModel struct {
	srv *openaitest.Server
	sc  SimModel

	mu     sync.Mutex         // the server calls respond on its own goroutines
	next   []openaitest.Reply // the run's replies in order; the last one repeats
	opener *openerScript      // the final answer read from the request (a topic it names); nil: next as it is
	opened bool               // the scenario's concern was opened
	told   map[int]bool       // the days whose life (SimUser.Life) the model noted
	life   SimUser            // the user, for their life
	n      int
}

// newSimModel starts the scripted model's endpoint; Close stops it.
func newSimModel(sc SimModel, user SimUser) (*simModel, error) {
	srv, err := openaitest.NewServer()
	if err != nil {
		return nil, fmt.Errorf("sim model: %w", err)
	}
	m := &simModel{srv: srv, sc: sc, told: map[int]bool{}, life: user}
	srv.SetDefault(m.respond)
	return m, nil
}

// Close stops the endpoint.
func (m *simModel) Close() { m.srv.Close() }

// URL is the endpoint's base URL for the OpenAI client.
func (m *simModel) URL() string { return m.srv.URL() }

// prepare scripts the answer to the next cognition run, for wake w at now on the
// scenario's day (1 = the first); roll is silenceRoll's for the wake.
func (m *simModel) prepare(w brain.Wake, now time.Time, day int, roll float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	m.opener = nil
	switch w.Reason.Code {
	case brain.ReasonProactive, brain.ReasonFollowup:
		if roll < m.sc.Silent {
			m.next = []openaitest.Reply{openaitest.OpenerAnswer("", m.sc.ProactiveStatus, 0.9, "")}
			return
		}
		m.opener = &openerScript{text: fmt.Sprintf("Thinking of you (%s #%d): how are things?", strings.ReplaceAll(w.Reason.Code, "followup", "follow-up"), m.n), status: m.sc.ProactiveStatus}
		m.next = []openaitest.Reply{openaitest.Answer(m.opener.text, m.sc.ProactiveStatus, 0.9)}
	case brain.ReasonConcernCheckin, brain.ReasonThought:
		m.opener = &openerScript{text: fmt.Sprintf("You had something on: how did it go (#%d)?", m.n), status: m.sc.ProactiveStatus}
		if w.Reason.Code == brain.ReasonThought {
			m.opener.text = fmt.Sprintf("Thinking of you: something I kept to tell you (#%d).", m.n)
		}
		m.next = []openaitest.Reply{openaitest.Answer(m.opener.text, m.sc.ProactiveStatus, 0.9)}
	default:
		m.opener = &openerScript{text: fmt.Sprintf("Scripted answer #%d.", m.n), status: m.sc.ReplyStatus, chat: true}
		m.next = []openaitest.Reply{openaitest.Answer(m.opener.text, m.sc.ReplyStatus, 0.9)}
		if l, ok := m.life.lifeOn(day); ok && !m.told[day] && w.Reason.Code == brain.ReasonUserMessage {
			m.told[day] = true
			m.next = append(lifeCalls(l), m.next...)
		}
		if c := m.sc.Concern; c != nil && !m.opened && day == c.Day && w.Reason.Code == brain.ReasonUserMessage {
			m.opened = true
			args, _ := json.Marshal(map[string]any{"action": "open", "id": nil, "summary": c.Summary, "kind": "event",
				"check_in_at": now.Add(c.CheckIn.Std()).Format(time.RFC3339), "note": nil})
			m.next = append([]openaitest.Reply{openaitest.Tool("innerlife_concern", string(args))}, m.next...)
		}
	}
}

// silenceRoll draws, for a proactive or follow-up wake, the number that decides whether
// the scripted model stays silent (model.silent); -1 for another wake, which draws
// nothing. A live run draws it too, so that the scripted user's draws after it fall as in
// the scripted run that estimated it.
func silenceRoll(rng *rand.Rand, code string) float64 {
	if code == brain.ReasonProactive || code == brain.ReasonFollowup {
		return rng.Float64()
	}
	return -1
}

// prepareDream scripts a dream run on the scenario's day: after a day (or the day after
// one) on which the user told anima something of their life, it writes a self note, a
// line of how they are and a thought to share tied to what they said (all in one request),
// then ends; otherwise it reflects in silence (an empty answer, no tools).
func (m *simModel) prepareDream(day int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opener = nil
	m.next = []openaitest.Reply{openaitest.Answer("", string(brain.StatusActive), 0.9)}
	if l, ok := m.life.lifeBy(day); ok {
		m.next = append([]openaitest.Reply{dreamCalls(l, day)}, m.next...)
	}
}

// respond answers one request: the memory summarizer gets a summary, cognition the
// scripted answer.
func (m *simModel) respond(req openai.ChatCompletionRequest) openaitest.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You keep the long-term memory") {
		return openaitest.Reply{Content: "The user and anima talk now and then; nothing is pending."}
	}
	if len(m.next) == 0 {
		return openaitest.Answer("", string(brain.StatusActive), 0.9)
	}
	r := m.next[0]
	if len(m.next) > 1 {
		m.next = m.next[1:]
	} else if m.opener != nil {
		r = m.opener.reply(req) // the final answer, with the topic the request names
	}
	return r
}

// violations are the protocol errors the endpoint saw in the client's requests.
func (m *simModel) violations() []string { return m.srv.Violations() }
