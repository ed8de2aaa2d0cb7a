package cognition

import "github.com/anima-bot/anima/brain/provider"

// redactProvider is what cognition logs or returns of a failed request's error: the one
// redaction of endpoint errors (package provider), which memory's summarizer shares.
func redactProvider(err error) error { return provider.Redact(err) }

// redactText is a provider's message on one line, its quoted parts left out.
func redactText(s string) string { return provider.Text(s) }
