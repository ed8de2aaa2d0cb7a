package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

// TestBenchMemory: `anima bench memory` reads the LoCoMo file, takes its budget from
// --config (the defaults without it), and prints the figures as JSON with --json (their
// values are memory/bench's TestFigures') or as a table.
func TestBenchMemory(t *testing.T) {
	t.Parallel()
	const conv = "../../brain/memory/bench/testdata/maya.json"
	cfg := filepath.Join(t.TempDir(), "anima.yaml")
	if err := os.WriteFile(cfg, []byte("llm:\n  context_tokens: 2000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		budget int
	}{
		{"defaults", []string{"bench", "memory", "--json", "--k", "3", conv}, 6000},
		{"config after the file", []string{"bench", "memory", conv, "--json", "--k", "3", "--config", cfg}, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			var got struct {
				Budget        int                `json:"budget_tokens"`
				Overall       map[string]float64 `json:"overall"`
				Categories    map[string]map[string]float64
				Conversations map[string]map[string]float64
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("%v:\n%s", err, stdout)
			}
			o := got.Overall
			if got.Budget != tc.budget || o["questions"] != 8 || o["prompt_any"] != 1 || o["prompt_all"] != 1 ||
				o["memories_any"] != 0.875 || o["memories_all"] != 0.75 || o["search_any_at_k"] != 0.75 || o["recall_p50_us"] <= 0 {
				t.Errorf("budget %d, overall %v", got.Budget, o)
			}
			if cats := slices.Sorted(maps.Keys(got.Categories)); !slices.Equal(cats, []string{"1", "2", "3", "4", "5"}) {
				t.Errorf("categories %q", cats)
			}
			if c := got.Conversations["maya.json"]; c["questions"] != 8 || c["bytes_per_turn"] <= 0 {
				t.Errorf("conversations %v, want maya.json's 8 questions and its bytes per turn", got.Conversations)
			}
		})
	}
	t.Run("table", func(t *testing.T) {
		t.Parallel()
		code, stdout, stderr := runCLI(t, "bench", "memory", conv)
		if code != 0 || !strings.Contains(stdout, "1 multi-hop") || !strings.Contains(stdout, "maya.json") || strings.Contains(stdout, "search@") {
			t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
		}
	})
	for _, args := range [][]string{{"bench"}, {"bench", "memory"}, {"bench", "memory", "--k", "51", conv}, {"bench", "memory", "--days", "1", conv}} {
		if code, _, stderr := runCLI(t, args...); code != 2 || !strings.Contains(stderr, "Usage:") {
			t.Errorf("%q: exit %d, want 2 with the usage:\n%s", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "bench", "memory", "missing.json"); code != 1 || !strings.Contains(stderr, "missing.json") {
		t.Errorf("a missing file: exit %d:\n%s", code, stderr)
	}
}

// TestBenchMemoryLive (issue 34): --live embeds on --config's endpoint with its
// llm.embedding_model: it prints the requests it would make and sends nothing without
// --yes (exit 2); with it the turns and questions are embedded and the report counts the
// requests; --live without an embedding model, and --yes without --live, are refused.
func TestBenchMemoryLive(t *testing.T) {
	t.Parallel()
	const conv = "../../brain/memory/bench/testdata/maya.json"
	ai := openaitest.New(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "anima.yaml")
	body := fmt.Sprintf("llm:\n  base_url: %s\n  api_key: test-key\n  embedding_model: text-embedding-3-small\n", ai.URL())
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "bench", "memory", "--live", "--config", cfg, conv)
	if code != 2 || !strings.Contains(stdout, "embedding requests") || !strings.Contains(stderr, "--yes") || len(ai.Embeddings()) != 0 {
		t.Fatalf("without --yes: exit %d, %d requests:\n%s%s", code, len(ai.Embeddings()), stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "bench", "memory", "--live", "--yes", "--json", "--config", cfg, conv)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got struct {
		Embedding struct{ Requests, Texts, Tokens int }
	}
	if err := json.Unmarshal([]byte(stdout[strings.Index(stdout, "{"):]), &got); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if n := len(ai.Embeddings()); n == 0 || got.Embedding.Requests != n || got.Embedding.Tokens == 0 {
		t.Errorf("report counts %+v, the endpoint saw %d requests", got.Embedding, n)
	}
	plain := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(plain, []byte("llm:\n  context_tokens: 2000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--live", "--config", plain}, {"--live"}, {"--yes", "--config", cfg}} {
		if code, _, stderr := runCLI(t, append([]string{"bench", "memory", conv}, args...)...); code != 2 {
			t.Errorf("%q: exit %d, want 2:\n%s", args, code, stderr)
		}
	}
}
