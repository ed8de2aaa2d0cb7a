package memory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/brain/provider"
)

// Embedder turns texts into vectors of one length. Embed returns a vector for each text,
// in order, and the tokens the endpoint counted; its errors are the endpoint's, wrapped
// (ErrNoEmbeddings when the endpoint has no such model or refuses it for good).
type Embedder interface {
	Embed(ctx context.Context, texts []string) (vecs [][]float32, tokens int, err error)
	// ID names the model and its dimensions: vectors of another ID are not comparable.
	ID() string
}

// Meter is where what embeddings cost is counted: the day's token budget and the share
// of the person they were made for. It is cognition's accountant (bot wires it).
type Meter interface {
	// Allowed reports whether tokens may be spent for user now (0: for no one in
	// particular): false once the day's budget, or user's share, is spent.
	Allowed(user int64) bool
	// Charge counts tokens spent for user (0: no one's share) in the day's budget.
	Charge(user int64, tokens int)
}

// ErrNoEmbeddings is returned by an Embedder whose endpoint will not embed with its model
// (no such model, no embeddings at all, the key refused): retrying will not help.
var ErrNoEmbeddings = errors.New("the endpoint has no embeddings with this model")

var _ Embedder = OpenAIEmbedder{}

// OpenAIEmbedder embeds texts with an OpenAI-compatible /embeddings endpoint.
type OpenAIEmbedder struct {
	Client *openai.Client
	Model  string
	// Dimensions, when above 0, asks the model for vectors that long (only models that
	// take it: OpenAI's text-embedding-3-*). EmbedderDimensions chooses it.
	Dimensions int
}

// EmbedderDimensions is the length to ask model for: 256 for OpenAI's text-embedding-3-*
// (their vectors shortened keep most of their quality, and a quarter of a kilobyte per turn
// stored), 0 (the model's own) for the others, which may refuse the parameter.
func EmbedderDimensions(model string) int {
	if strings.HasPrefix(model, "text-embedding-3") {
		return 256
	}
	return 0
}

// ID implements Embedder.
func (e OpenAIEmbedder) ID() string { return fmt.Sprintf("%s/%d", e.Model, e.Dimensions) }

// Embed implements Embedder with one request. Errors are the client's, redacted (an
// endpoint's answer may echo the texts); a 400, 401, 403 or 404 wraps ErrNoEmbeddings.
func (e OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, int, error) {
	if e.Client == nil {
		return nil, 0, fmt.Errorf("embed: no client: %w", ErrNoEmbeddings)
	}
	resp, err := e.Client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input: texts, Model: openai.EmbeddingModel(e.Model), Dimensions: e.Dimensions,
	})
	if err != nil {
		switch provider.Status(err) {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return nil, 0, fmt.Errorf("embed with %s: %w: %w", e.Model, ErrNoEmbeddings, provider.Redact(err))
		}
		return nil, 0, fmt.Errorf("embed with %s: %w", e.Model, provider.Redact(err))
	}
	if len(resp.Data) != len(texts) {
		return nil, 0, fmt.Errorf("embed with %s: %d vectors for %d texts: %w", e.Model, len(resp.Data), len(texts), ErrNoEmbeddings)
	}
	vecs := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(vecs) || len(d.Embedding) == 0 {
			return nil, 0, fmt.Errorf("embed with %s: bad vector %d: %w", e.Model, d.Index, ErrNoEmbeddings)
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, 0, fmt.Errorf("embed with %s: vector %d of %d dimensions, not %d: %w", e.Model, i, len(v), len(vecs[0]), ErrNoEmbeddings)
		}
	}
	return vecs, resp.Usage.PromptTokens, nil
}
