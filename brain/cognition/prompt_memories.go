package cognition

import "github.com/sashabaranov/go-openai"

// memories is what anima remembers of the person, as fitted: facts, the summary of earlier
// conversation and the memories relevant to this run, as untrusted data (untrusted.go).
var memories = section{name: "memories", fitted: true, build: (*Cognition).memories}

func (c *Cognition) memories(p *prompt) []openai.ChatCompletionMessage {
	about := "the user"
	if p.w.Rel.Group {
		about = quote(p.w.UserName()) + " (told in this group)"
	}
	return system(dataBlock(about, p.f.facts, p.f.summary, p.f.memories))
}
