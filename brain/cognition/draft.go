package cognition

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// drafts shows a run's answer as it is written, on the wake's Drafter. A nil *drafts shows
// nothing. It is used by one run at a time (the smart retry reuses the fast run's, so its
// answer replaces the fast one in the same draft).
type drafts struct {
	d     brain.Drafter
	chat  int64
	shown string // the text last handed to the Drafter
	off   bool   // the Drafter refused: no more drafts in this run
	log   func(err error)
}

// newDrafts returns the drafts of w, or nil when w is not to be drafted.
func (c *Cognition) newDrafts(w brain.Wake) *drafts {
	if w.Drafter == nil {
		return nil
	}
	return &drafts{d: w.Drafter, chat: w.Chat, log: func(err error) {
		c.log.Debug("drafts off for this answer", "chat", w.Chat, "err", err)
	}}
}

func (ds *drafts) active() bool { return ds != nil && !ds.off }

// update shows what may be shown of content, the message being written, if it changed.
func (ds *drafts) update(ctx context.Context, content string) {
	if !ds.active() {
		return
	}
	if text := draftText(content); text != "" && text != ds.shown {
		ds.show(ctx, text)
	}
}

// clear takes back a draft already shown (the answer it previewed will not be sent): the
// chat shows "thinking…" until the next draft.
func (ds *drafts) clear(ctx context.Context) {
	if ds.active() && ds.shown != "" {
		ds.show(ctx, "")
	}
}

func (ds *drafts) show(ctx context.Context, text string) {
	ds.shown = text
	if err := ds.d.Draft(ctx, ds.chat, text); err != nil {
		ds.off = true
		ds.log(err)
	}
}

// draftText is what may be shown of a final answer still being written, following the rule
// of parseAnswer: the text itself when it is clearly prose (it does not open with "{" or a
// code fence around one), the "response" field of the structured answer as far as it has
// arrived, else "" (undecided yet, or no response field): raw JSON is never shown.
func draftText(content string) string {
	s := strings.TrimLeft(content, " \t\r\n")
	switch {
	case s == "":
		return ""
	case s[0] == '{':
		return partialResponse(s)
	case strings.HasPrefix("```", s):
		return "" // "`" or "``": a fence may be opening
	case strings.HasPrefix(s, "```"):
		// The closing fence is not part of an answer cut short: backticks at the end go.
		line, rest, complete := strings.Cut(strings.TrimRight(s[3:], "` \t\r\n"), "\n")
		if i := strings.IndexByte(line, '{'); i >= 0 && isInfoString(line[:i]) {
			return partialResponse(line[i:]) // ```json {…
		}
		if !complete {
			return "" // the fence's first line is not complete
		}
		if rest = strings.TrimLeft(rest, " \t\r\n"); rest == "" {
			return ""
		} else if rest[0] == '{' && !strings.ContainsAny(line, "{[") {
			// As stripFences reads a fence: a first line without a brace is dropped,
			// whatever it says, so a draft must not show what the answer will not.
			return partialResponse(rest)
		}
	}
	return strings.TrimSpace(s)
}

// partialResponse reads the top-level "response" string of a JSON object that may still be
// incomplete, as far as it has arrived; "" when it has not begun.
func partialResponse(s string) string {
	depth := 0
	wantKey := false
	key := ""
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '{', '[':
			depth++
			wantKey = c == '{' && depth == 1
		case '}', ']':
			depth--
			if depth <= 0 {
				return "" // the object ended without a response string
			}
		case ',':
			wantKey = depth == 1
		case '"':
			raw, n := scanString(s[i:])
			i += n - 1
			if depth != 1 {
				continue
			}
			if wantKey {
				key, wantKey = decodeString(raw), false
				continue
			}
			if key == "response" {
				return strings.TrimSpace(decodeString(raw))
			}
		}
	}
	return ""
}

// scanString reads the JSON string opening at s[0], which may not be closed yet: its raw
// body (escapes kept) and the bytes consumed.
func scanString(s string) (raw string, n int) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[1:i], i + 1
		}
	}
	return s[1:], len(s)
}

// decodeString decodes a raw JSON string body that may stop in the middle of an escape.
func decodeString(raw string) string {
	for cut := 0; cut <= 6 && cut <= len(raw); cut++ {
		var out string
		if json.Unmarshal([]byte(`"`+raw[:len(raw)-cut]+`"`), &out) == nil {
			return out
		}
	}
	return ""
}
