package cognition

import "github.com/sashabaranov/go-openai"

// innerLife is anima's own notes from the plugins (its journal, the concerns it follows),
// as fitted, one untrusted data block (fitSections).
var innerLife = section{name: "inner life", fitted: true, build: (*Cognition).innerLife}

func (c *Cognition) innerLife(p *prompt) []openai.ChatCompletionMessage { return system(p.f.sections) }
