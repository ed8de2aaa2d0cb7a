package prompt

import (
	"strings"

	"github.com/sashabaranov/go-openai"
)

// turns is the recent conversation, as fitted: a note on the time marks, then each turn
// marked with its time (time.go), a group member's labelled with their name; empty
// turns are left out.
var turns = section{name: "turns", fitted: true, msgs: (*Builder).turns}

func (c *Builder) turns(p *prompt) []openai.ChatCompletionMessage {
	all, f := p.rc.Turns, &p.f
	if f.first >= len(all) {
		return nil
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(all)-f.first+1)
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: turnNote(all[f.first:])})
	for i, t := range all[f.first:] {
		role := openai.ChatMessageRoleUser
		if t.Role == "assistant" {
			role = openai.ChatMessageRoleAssistant
		}
		if strings.TrimSpace(t.Text) == "" {
			continue
		}
		content := t.Text
		if p.w.Rel.Group && role == openai.ChatMessageRoleUser && t.Name != "" {
			content = labelled(t.Name, content)
		}
		content = f.tags.tag(f.first+i) + content
		msgs = append(msgs, openai.ChatCompletionMessage{Role: role, Content: content})
	}
	if len(msgs) == 1 {
		return nil
	}
	return msgs
}
