package bot

import (
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/aggregation"
	"github.com/anima-bot/anima/brain/autonomic"
	"github.com/anima-bot/anima/brain/cognition"
	"github.com/anima-bot/anima/brain/speech"
	"github.com/anima-bot/anima/channels/telegram"
)

// This file turns the validated configuration into what each component is built with, so
// that Run only wires. Nothing here judges the values: package config has done that.

// CognitionConfig is the llm and persona sections as cognition takes them; zone is the
// default user zone.
func CognitionConfig(cfg config.Config, zone *time.Location) cognition.Config {
	return cognition.Config{
		FastModel:            cfg.LLM.FastModel,
		SmartModel:           cfg.LLM.SmartModel,
		RequestTimeout:       cfg.LLM.RequestTimeout.Std(),
		ConfidenceThreshold:  cfg.LLM.ConfidenceThreshold,
		DailyTokenBudget:     int(cfg.LLM.DailyTokenBudget),
		ContextTokens:        cfg.LLM.ContextTokens,
		ToolShare:            cfg.LLM.ToolShare,
		MaxOutputTokens:      cfg.LLM.MaxOutputTokens,
		PersonaName:          cfg.Persona.Name,
		PersonaDescription:   cfg.Persona.Description,
		PersonaInterests:     cfg.Persona.Interests,
		AnswerFormat:         answerFormat(cfg.LLM),
		DefaultZone:          zone,
		QuietHours:           cfg.Proactive.QuietHours,
		TranscriptionModel:   cfg.LLM.TranscriptionModel,
		MaxAudio:             cfg.LLM.MaxAudio.Std(),
		Vision:               cfg.LLM.Vision,
		DailyUserTokenBudget: int(cfg.LLM.DailyUserTokenBudget),
		DailyUserAudio:       cfg.Limits.AudioPerUserPerDay.Std(),
	}
}

// SpeechConfig is the llm, voice and persona settings speech takes (llm.speech_model
// set); zone is the default user zone, whose day the daily speech counts in, as the
// token budget does.
func SpeechConfig(cfg config.Config, zone *time.Location) speech.Config {
	return speech.Config{
		Model:           cfg.LLM.SpeechModel,
		Voice:           cfg.Voice.Name,
		Style:           cfg.Persona.VoiceStyle,
		MaxLength:       cfg.Voice.MaxLength.Std(),
		DailyUserSpeech: cfg.Limits.SpeechPerUserPerDay.Std(),
		// at most the client's own timeout (llm.request_timeout) takes effect
		Timeout: min(cfg.LLM.SpeechTimeout.Std(), cfg.LLM.RequestTimeout.Std()),
		Zone:    zone,
	}
}

// telegramConfig is the telegram section as the channel takes it, with anima's command
// menu.
func telegramConfig(t config.TelegramConfig) telegram.Config {
	return telegram.Config{
		Token: t.Token.Reveal(), APIURL: t.APIURL, Mode: t.Mode,
		Webhook: telegram.WebhookConfig{
			Listen: t.Webhook.Listen, Path: t.Webhook.Path,
			PublicURL: t.Webhook.PublicURL, SecretToken: t.Webhook.SecretToken.Reveal(),
		},
		AllowedUsers: t.AllowedUsers, Public: t.Public,
		Commands: menuCommands(),
	}
}

// drafter is what shows replies as they are written: the Telegram channel when
// telegram.stream_replies is on, else nothing (and the console has no drafts).
func drafter(t config.TelegramConfig, tg *telegram.Channel) brain.Drafter {
	if !t.StreamReplies || tg == nil {
		return nil
	}
	return tg
}

// ProactiveLayers builds the two layers the proactive policy drives: the aggregation layer
// that applies it and the autonomic layer whose social pressure follows its min_silence
// and quiet hours.
func ProactiveLayers(pol brain.ProactivePolicy, reg prometheus.Registerer, neurons ...brain.Neuron) (*aggregation.Aggregator, *autonomic.Layer) {
	agg := aggregation.New(pol, aggregation.Options{Registerer: reg})
	auto := autonomic.Default()
	auto.MinSilence, auto.QuietHours = pol.MinSilence, pol.QuietHours
	return agg, autonomic.New(auto, neurons...)
}

// answerFormat resolves llm.answer_format: auto asks for the json_schema format only of
// OpenAI's own API, which honours it beside tools.
func answerFormat(l config.LLMConfig) bool {
	switch l.AnswerFormat {
	case "json_schema":
		return true
	case "auto":
		u, err := url.Parse(l.BaseURL)
		return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	return false
}
