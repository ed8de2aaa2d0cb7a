package setup

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/anima-bot/anima/bot/config"
)

// Check asks Telegram and the model endpoint what init asks them, for a configuration
// already written (`anima check`): getMe with telegram.token, then the endpoint's models
// list with llm.api_key and each of llm.fast_model and llm.smart_model in it (or, for an
// endpoint without the list, a one-token request to each). skip names keys already found
// wrong, whose checks are left out. Every problem comes back joined, each a
// *config.KeyError naming the key to fix; no error shows the token or the key.
func Check(ctx context.Context, cfg config.Config, skip func(key string) bool) error {
	var p []error
	if cfg.Telegram.Token != "" && !skip("telegram.token") && !skip("telegram.api_url") {
		if _, err := getMe(ctx, cfg.Telegram.APIURL, cfg.Telegram.Token.Reveal()); err != nil {
			p = append(p, &config.KeyError{Key: "telegram.token", Msg: "getMe: " + err.Error()})
		}
	}
	if skip("llm.base_url") || skip("llm.api_key") {
		return errors.Join(p...)
	}
	base, key := cfg.LLM.BaseURL, cfg.LLM.APIKey.Reveal()
	ids, err := listModels(ctx, base, key)
	switch {
	case errors.Is(err, errKeyRefused):
		return errors.Join(append(p, &config.KeyError{Key: "llm.api_key", Msg: err.Error()})...)
	case err != nil:
		return errors.Join(append(p, &config.KeyError{Key: "llm.base_url", Msg: err.Error()})...)
	}
	models := []struct{ key, model string }{{"llm.fast_model", cfg.LLM.FastModel}, {"llm.smart_model", cfg.LLM.SmartModel}}
	for i, m := range models {
		if skip(m.key) || i > 0 && m.model == models[0].model {
			continue
		}
		switch {
		case ids == nil:
			err = ping(ctx, base, key, m.model)
		case !slices.Contains(ids, m.model):
			err = fmt.Errorf("the endpoint does not list the model %q", m.model)
		default:
			err = nil
		}
		if err != nil {
			p = append(p, &config.KeyError{Key: m.key, Msg: err.Error()})
		}
	}
	return errors.Join(p...)
}
