package cognition_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

const (
	fast  = "fast-model"
	smart = "smart-model"
)

var t0 = braintest.T0 // a Friday

type fakeMemory struct {
	rc      brain.Recall
	mu      sync.Mutex
	queries []string
}

func (m *fakeMemory) Recall(_ context.Context, _, _ int64, query string, _ int) (brain.Recall, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queries = append(m.queries, query)
	return m.rc, nil
}

// sleeper records the waits the loop asks for and returns at once.
type sleeper struct {
	braintest.Recorder[time.Duration]
}

func (s *sleeper) sleep(_ context.Context, d time.Duration) error { return s.Add(d) }

// memoTool is a test tool with a strict schema {"note": string}; it records its calls.
type memoTool struct {
	name     string
	desc     string // the description; "" is "test tool <name>"
	effects  bool
	silent   bool // a side effect without intents (the tool acts directly)
	profiles []brain.Profile
	mu       sync.Mutex
	calls    []string
}

func (m *memoTool) Spec() brain.ToolSpec {
	desc := m.desc
	if desc == "" {
		desc = "test tool " + m.name
	}
	return brain.ToolSpec{
		Name: m.name, Description: desc,
		Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,` +
			`"properties":{"note":{"type":"string"},"tag":{"type":["string","null"]}},"required":["note","tag"]}`),
		SideEffects: m.effects, Profiles: m.profiles,
	}
}

func (m *memoTool) Call(_ context.Context, call brain.ToolCall) (brain.ToolResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, string(call.Args))
	res := brain.ToolResult{Content: "noted " + string(call.Args)}
	if m.effects && !m.silent {
		res.Intents = []brain.Intent{brain.Remember{User: call.User, Attribute: "note", Value: string(call.Args)}}
	}
	return res, nil
}

func (m *memoTool) Calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

type env struct {
	c     *cognition.Cognition
	srv   *openaitest.Server
	reg   *prometheus.Registry
	sleep *sleeper
	clock *braintest.Clock
	tools *cognition.Registry
}

type setup struct {
	cfg   func(*cognition.Config)
	opts  func(*cognition.Options)
	mem   cognition.Memory
	tools []brain.Tool
}

func newEnv(t *testing.T, s setup) *env {
	t.Helper()
	srv := openaitest.New(t)
	t.Cleanup(func() {
		if v := srv.Violations(); len(v) != 0 {
			t.Errorf("fake server saw invalid requests:\n%s", strings.Join(v, "\n"))
		}
	})
	cfg := cognition.Config{
		FastModel: fast, SmartModel: smart, RequestTimeout: 5 * time.Second,
		PersonaName: "Mira", PersonaDescription: "A warm, curious companion.",
		DefaultZone: time.UTC, AnswerFormat: true,
	}
	if s.cfg != nil {
		s.cfg(&cfg)
	}
	e := &env{srv: srv, reg: prometheus.NewRegistry(), sleep: &sleeper{}, clock: braintest.NewClock(t0), tools: cognition.NewRegistry()}
	opts := cognition.Options{
		Registerer: e.reg, Clock: e.clock, Sleep: e.sleep.sleep, Backoff: 100 * time.Millisecond,
		BreakerThreshold: 100,
	}
	if s.opts != nil {
		s.opts(&opts)
	}
	for _, tl := range s.tools {
		if err := e.tools.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	e.c = cognition.New(cfg, cognition.NewClient(srv.URL(), "test-key", cfg.RequestTimeout), s.mem, e.tools, opts)
	return e
}

func userWake(texts ...string) brain.Wake { return braintest.UserWake(texts...) }

func proactiveWake() brain.Wake { return braintest.ProactiveWake() }

func sends(out brain.Outcome) []brain.SendMessage {
	var s []brain.SendMessage
	for _, in := range out.Intents {
		if m, ok := in.(brain.SendMessage); ok {
			s = append(s, m)
		}
	}
	return s
}

// wantSent fails t unless out sends exactly one message, with text; it returns the message.
func wantSent(t *testing.T, out brain.Outcome, text string) brain.SendMessage {
	t.Helper()
	s := sends(out)
	if len(s) != 1 || s[0].Text != text {
		t.Fatalf("sends = %+v, want only %q", s, text)
	}
	return s[0]
}

func toolNames(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

func think(t *testing.T, e *env, w brain.Wake) brain.Outcome {
	t.Helper()
	out, err := e.c.Think(context.Background(), w)
	if err != nil {
		t.Fatalf("Think: %v", err)
	}
	return out
}

// lastToolResults returns the tool messages of a request, in order.
func toolMessages(req openai.ChatCompletionRequest) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m)
		}
	}
	return out
}

// metric returns the value of the series of name with the given label pairs (0 if absent).
func metric(t *testing.T, e *env, name string, labels ...string) float64 {
	t.Helper()
	v, _ := braintest.Metric(t, e.reg, name, labels...)
	return v
}
