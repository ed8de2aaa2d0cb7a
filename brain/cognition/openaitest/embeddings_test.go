package openaitest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestEmbeddings: the fake's vectors have the dimensions asked for, are deterministic,
// and put texts that share a word or a meaning (a synonym) nearer than unrelated ones.
func TestEmbeddings(t *testing.T) {
	t.Parallel()
	s := openaitest.New(t)
	c := s.Client(5 * time.Second)
	in := []string{"I adopted a puppy last week", "the dog barks at night", "we bought a new sofa", "I adopted a puppy last week"}
	resp, err := c.CreateEmbeddings(context.Background(), openai.EmbeddingRequestStrings{Input: in, Model: "text-embedding-3-small", Dimensions: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Data) != len(in) || resp.Usage.PromptTokens == 0 {
		t.Fatalf("got %d vectors, %d tokens", len(resp.Data), resp.Usage.PromptTokens)
	}
	for _, d := range resp.Data {
		if len(d.Embedding) != 64 {
			t.Fatalf("vector %d has %d dimensions, want 64", d.Index, len(d.Embedding))
		}
	}
	v := func(i int) []float32 { return resp.Data[i].Embedding }
	if got := cosine(v(0), v(3)); got < 0.999 {
		t.Errorf("same text: cosine %.3f, want 1", got)
	}
	if near, far := cosine(v(0), v(1)), cosine(v(0), v(2)); near <= far+0.1 {
		t.Errorf("puppy~dog %.3f not above puppy~sofa %.3f", near, far)
	}
	got := s.Embeddings()
	if len(got) != 1 || got[0].Model != "text-embedding-3-small" || got[0].Dimensions != 64 || len(got[0].Input) != 4 {
		t.Errorf("recorded %+v", got)
	}
}

// TestEmbeddingsFailures: an unknown model is a 404, a set status fails every request.
func TestEmbeddingsFailures(t *testing.T) {
	t.Parallel()
	s := openaitest.New(t)
	c := s.Client(5 * time.Second)
	req := openai.EmbeddingRequestStrings{Input: []string{"hello"}, Model: "nomic-embed-text"}
	s.SetEmbeddingModels("text-embedding-3-small")
	_, err := c.CreateEmbeddings(context.Background(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusNotFound {
		t.Fatalf("unknown model: err = %v, want a 404", err)
	}
	s.SetEmbeddingModels()
	s.SetEmbeddingStatus(http.StatusServiceUnavailable)
	if _, err := c.CreateEmbeddings(context.Background(), req); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 {
		t.Fatalf("failing endpoint: err = %v, want a 503", err)
	}
	s.SetEmbeddingStatus(0)
	resp, err := c.CreateEmbeddings(context.Background(), req)
	if err != nil || len(resp.Data[0].Embedding) != openaitest.DefaultDimensions {
		t.Fatalf("err = %v", err)
	}
}
