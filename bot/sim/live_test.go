package sim

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// liveModel is the fake OpenAI server standing in for the configuration's endpoint: it
// wants the configured key and answers every run with numbered words of its own, the
// memory summarizer with a summary.
func liveModel(t *testing.T, key string) *openaitest.Server {
	t.Helper()
	srv := openaitest.New(t)
	srv.SetKey(key)
	var mu sync.Mutex
	n := 0
	srv.SetDefault(func(req openai.ChatCompletionRequest) openaitest.Reply {
		if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You keep the long-term memory") {
			return openaitest.Reply{Content: "They talk now and then."}
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		return openaitest.Answer(fmt.Sprintf("live words %d", n), string(brain.StatusActive), 0.9)
	})
	return srv
}

// TestLiveRunTalksToTheConfiguredEndpoint: a live run sends every request to
// llm.base_url with llm.api_key (the fake refuses another key), as many as the dry run
// estimated when the model behaves as the script does, and the summary lists each first
// message in the model's words under the brief of the request that produced it. The dry
// run sends nothing there.
func TestLiveRunTalksToTheConfiguredEndpoint(t *testing.T) {
	t.Parallel()
	const key = "sk-sim-live-test"
	srv := liveModel(t, key)
	cfg := simConfig()
	cfg.LLM.BaseURL, cfg.LLM.APIKey = srv.URL(), key
	// Ari answers half of anima's first messages at random: the live run draws as the dry
	// run did, so with a model that answers as the script does (active, no tools) both
	// take the same turns.
	sc, err := ParseScenario([]byte(`
name: answers at random
days: 5
seed: 3
user:
  name: Ari
  writes:
    - {at: "10:00", jitter: 1h, chance: 0.6}
    - {at: "19:30", jitter: 30m}
  answer: {proactive: 0.5, reply: 0.5}
`))
	if err != nil {
		t.Fatal(err)
	}

	est, err := EstimateLive(context.Background(), cfg, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the estimate sent %d requests to the live endpoint, want 0", n)
	}
	if est.Requests == 0 || est.Bytes == 0 {
		t.Fatalf("estimate %+v, want requests and bytes", est)
	}

	tl, err := runScenario(context.Background(), cfg, sc, Options{Live: true})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != tl.requests || len(reqs) != est.Requests {
		t.Errorf("the live endpoint got %d requests, the run counted %d, the estimate said %d: want one figure",
			len(reqs), tl.requests, est.Requests)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("invalid requests: %v", v)
	}
	_, _, calls, _, failed, _, _ := tl.totals()
	if failed != 0 || calls != len(reqs) {
		t.Errorf("%d failed runs and %d model calls in the timeline, want 0 and %d", failed, calls, len(reqs))
	}
	briefs := map[string]bool{}
	for _, r := range reqs {
		for _, m := range r.Body.Messages {
			if strings.HasPrefix(m.Content, briefHeading) {
				briefs[m.Content] = true
			}
		}
	}
	if len(tl.openers) == 0 || len(tl.openers) != len(tl.sends) {
		t.Fatalf("%d openers for %d first messages sent, want one each and some", len(tl.openers), len(tl.sends))
	}
	for _, o := range tl.openers {
		if len(o.texts) != 1 || !strings.HasPrefix(o.texts[0], "live words ") {
			t.Errorf("%s: wrote %q, want the live model's words", o.at, o.texts)
		}
		if !briefs[o.brief] {
			t.Errorf("%s: brief %q is not one the endpoint was sent", o.at, o.brief)
		}
	}
	var b bytes.Buffer
	if err := tl.writeSummary(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"live model: gpt-4o-mini and gpt-4o at " + srv.URL() + "\n",
		fmt.Sprintf("first messages: %d, each with the brief its prompt gave the model (the configured model's words)", len(tl.openers)),
		"  anima: live words ",
		"    - Now: ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
