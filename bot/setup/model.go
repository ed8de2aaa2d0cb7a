package setup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/provider"
)

// model asks for the endpoint, its key and the two models, and checks them: the models
// list when the endpoint has one, else a one-token chat call with the fast model.
func (s *session) model(ctx context.Context, cfg *config.Config) error {
	base, key := s.opt.LLMBaseURL, s.opt.LLMKey
	keyRefused := false // a server on this machine needs no key, unless it refused none
	for attempt := 1; ; attempt++ {
		if base == "" {
			var err error
			base, err = s.ask("Model endpoint, OpenAI-compatible (a local Ollama: http://localhost:11434/v1)", cfg.LLM.BaseURL, "--llm-base-url")
			if err != nil {
				return err
			}
		}
		base = strings.TrimRight(base, "/")
		if key == "" && (!config.LoopbackURL(base) || keyRefused) {
			var err error
			if key, err = s.askSecret("API key for "+base, "API key", "ANIMA_LLM_API_KEY", "--llm-key"); err != nil {
				return err
			}
		}
		ids, err := listModels(ctx, base, key)
		if err == nil || !errors.Is(err, errKeyRefused) && !errors.Is(err, errUnreachable) {
			cfg.LLM.BaseURL, cfg.LLM.APIKey = base, config.Secret(key)
			s.keep(func(p *progress) { p.LLMBaseURL, p.LLMKey = base, key })
			switch {
			case err != nil:
			case ids == nil:
				fmt.Fprintln(s.out, "  The endpoint has no models list; a one-token request will check the models.")
			default:
				fmt.Fprintf(s.out, "  ✓ The endpoint answers and lists %d models.\n", len(ids))
			}
			return s.models(ctx, cfg, ids)
		}
		if !s.retry(attempt) || ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(s.out, "  ✗ %s\n", err)
		if errors.Is(err, errUnreachable) {
			base = ""
		}
		keyRefused = errors.Is(err, errKeyRefused)
		key = ""
	}
}

// models picks the fast and smart models; ids is the endpoint's list (nil when it has
// none, when a one-token chat call checks the fast model instead).
func (s *session) models(ctx context.Context, cfg *config.Config, ids []string) error {
	fast, smart := s.opt.FastModel, s.opt.SmartModel
	def := func(want string) string {
		if len(ids) == 0 || slices.Contains(ids, want) {
			return want
		}
		return ids[0]
	}
	for attempt := 1; ; attempt++ {
		var err error
		if fast == "" {
			if len(ids) > 0 && len(ids) <= 20 {
				fmt.Fprintf(s.out, "  Models: %s\n", strings.Join(ids, ", "))
			}
			if fast, err = s.ask("Fast model, for everyday turns", def(cfg.LLM.FastModel), "--model"); err != nil {
				return err
			}
		}
		if smart == "" {
			smartDef := fast // one model for both, unless the default pair is at hand
			if fast == cfg.LLM.FastModel && (len(ids) == 0 || slices.Contains(ids, cfg.LLM.SmartModel)) {
				smartDef = cfg.LLM.SmartModel
			}
			if smart, err = s.ask("Smart model, when the fast one is unsure", smartDef, "--smart-model"); err != nil {
				return err
			}
		}
		err = checkModels(ctx, cfg, ids, fast, smart)
		if err == nil {
			cfg.LLM.FastModel, cfg.LLM.SmartModel = fast, smart
			if ids == nil {
				fmt.Fprintf(s.out, "  ✓ Model check passed: %s answered a one-token request.\n", modelNames(fast, smart))
			}
			return nil
		}
		if !s.retry(attempt) || ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(s.out, "  ✗ %s\n", err)
		fast, smart = "", ""
	}
}

// modelNames is "fast and smart", or the one name when they are the same.
func modelNames(fast, smart string) string {
	if fast == smart {
		return fast
	}
	return fast + " and " + smart + " each"
}

// checkModels checks fast and smart against the list, or, with none, makes a
// one-token chat call with each.
func checkModels(ctx context.Context, cfg *config.Config, ids []string, fast, smart string) error {
	for _, m := range []string{fast, smart} {
		if len(ids) > 0 {
			if !slices.Contains(ids, m) {
				return fmt.Errorf("the endpoint does not list the model %q", m)
			}
			continue
		}
		if err := ping(ctx, cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal(), m); err != nil {
			return err
		}
	}
	return nil
}

var (
	errKeyRefused  = errors.New("the endpoint refused the key")
	errUnreachable = errors.New("the endpoint cannot be reached")
)

// listModels returns the endpoint's models (GET /models). A server without the list
// (404) is not an error: ids is nil.
func listModels(ctx context.Context, base, key string) ([]string, error) {
	c := cognition.NewClient(base, key, 30*time.Second)
	list, err := c.ListModels(ctx)
	if err != nil {
		return nil, classify(err, base, key, "")
	}
	ids := []string{}
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// ping makes a one-token chat call with model.
func ping(ctx context.Context, base, key, model string) error {
	c := cognition.NewClient(base, key, 60*time.Second)
	_, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: model, MaxTokens: 1,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Say OK."}},
	})
	if err != nil {
		return classify(err, base, key, model)
	}
	return nil
}

// classify turns a go-openai error into one that says what to do, without the provider's
// raw text or the key. A 404 from the models list is nil (no list).
func classify(err error, base, key, model string) error {
	status := provider.Status(err)
	if status == 0 {
		msg := err.Error()
		if key != "" {
			msg = strings.ReplaceAll(msg, key, "[key]")
		}
		return fmt.Errorf("%w at %s: %s", errUnreachable, base, msg)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w (HTTP %d): check llm.api_key for %s", errKeyRefused, status, base)
	case status == http.StatusNotFound && model == "":
		return nil
	case status == http.StatusNotFound:
		return fmt.Errorf("the endpoint has no model %q (HTTP 404): pull it first or pick another", model)
	default:
		return fmt.Errorf("the endpoint answered HTTP %d to a one-token request for %q", status, model)
	}
}
