package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// checkParts validates the content of messages[i] when it is an array of parts: text
// parts carry text, and an image part's URL must be a base64 data: URL — a real endpoint
// would fetch any other URL, and for anima such a link (a Telegram file link) would carry
// the bot token off the machine.
func checkParts(i int, role string, content json.RawMessage) []string {
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return nil // a string (or checked elsewhere)
	}
	var bad []string
	for j, p := range parts {
		switch p.Type {
		case "text":
			if p.Text == "" {
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d] is an empty text part", i, j))
			}
		case "image_url":
			switch {
			case role != "user":
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d]: image parts belong in user messages, not %s", i, j, role))
			case p.ImageURL == nil:
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d] has no image_url", i, j))
			case !isDataURL(p.ImageURL.URL):
				bad = append(bad, fmt.Sprintf("messages[%d].content[%d] image url is not a base64 data: URL (%.24q…)", i, j, p.ImageURL.URL))
			}
		default:
			bad = append(bad, fmt.Sprintf("messages[%d].content[%d] has unknown part type %q", i, j, p.Type))
		}
	}
	return bad
}

// isDataURL reports whether u is data:image/<type>;base64,<data>.
func isDataURL(u string) bool {
	rest, ok := strings.CutPrefix(u, "data:image/")
	if !ok {
		return false
	}
	_, data, ok := strings.Cut(rest, ";base64,")
	return ok && data != ""
}

// ImageURLs returns the image URLs of a recorded request's messages, in order.
func (r Request) ImageURLs() []string {
	var out []string
	for _, m := range r.Body.Messages {
		for _, p := range m.MultiContent {
			if p.ImageURL != nil {
				out = append(out, p.ImageURL.URL)
			}
		}
	}
	return out
}

// UserText is the text of a recorded request's last user message, its text parts joined.
func (r Request) UserText() string {
	for i := len(r.Body.Messages) - 1; i >= 0; i-- {
		if m := r.Body.Messages[i]; m.Role == "user" {
			return messageText(m.Content, m.MultiContent)
		}
	}
	return ""
}
