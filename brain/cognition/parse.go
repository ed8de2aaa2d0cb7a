package cognition

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"

	"github.com/anima-bot/anima/brain"
)

// answer is the model's final word: what to say (empty = nothing), where the conversation
// stands and how sure it is.
type answer struct {
	Response   string
	Status     brain.ConversationStatus
	Confidence float64
	// Topic is the short label of what a first message is about (proactive and check-in
	// runs' answer format); "" when the model gave none.
	Topic string
	// statusSet is false when the model gave no valid status.
	statusSet bool
}

// parseAnswer reads a final message. The structured answer {"response","status","confidence"}
// (and "topic", in the format of a run that may write first) counts only when it is the whole reply — surrounding blanks and one Markdown code fence
// aside, small syntax slips repaired (see RepairJSON). Any other reply is prose, even one
// that quotes such an object (a user's forged answer, say): it is the response itself, as
// written, with status active and confidence 1. An invalid status becomes active;
// confidence is clamped to [0, 1] and defaults to 1.
func parseAnswer(content string) answer {
	text := strings.TrimSpace(content)
	if text == "" {
		return answer{Status: brain.StatusActive, Confidence: 1}
	}
	if a, ok := parseAnswerJSON(text); ok {
		return a
	}
	return answer{Response: text, Status: brain.StatusActive, Confidence: 1}
}

// maxEmbedTries bounds the braces parseAnswerLoose tries as the start of an embedded
// answer.
const maxEmbedTries = 64

// parseAnswerLoose reads a final message written without the answer format (the endpoint
// refused response_format): as parseAnswer, except that prose ending in the whole answer
// object — {"response": string, "status": one of the statuses, "confidence": number}, and
// maybe "topic" (a string or null), valid
// JSON with nothing else in it, maybe in a ```json fence — is that answer, its prose
// before dropped ("Sure! ```json {…}```"). An object quoted inside the prose, one followed
// by more prose, or one lacking a field or with a wrongly typed one stays part of the
// prose, as in parseAnswer.
func parseAnswerLoose(content string) answer {
	a := parseAnswer(content)
	if a.statusSet || a.Response == "" {
		return a // the structured answer, or nothing
	}
	if e, ok := embeddedAnswer(strings.TrimSpace(content)); ok {
		return e
	}
	return a
}

// embeddedAnswer finds the whole answer object at the end of text (a closing fence aside).
func embeddedAnswer(text string) (answer, bool) {
	text = strings.TrimSpace(strings.TrimSuffix(text, "```"))
	if !strings.HasSuffix(text, "}") {
		return answer{}, false
	}
	tries := 0
	for i := 0; i < len(text) && tries < maxEmbedTries; i++ {
		if text[i] != '{' {
			continue
		}
		tries++
		obj := text[i:]
		if !json.Valid([]byte(obj)) {
			continue
		}
		var v struct {
			Response   *string  `json:"response"`
			Status     *string  `json:"status"`
			Confidence *float64 `json:"confidence"`
			Topic      *string  `json:"topic"`
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &keys) != nil || len(keys) != 3 && !(len(keys) == 4 && keys["topic"] != nil) ||
			json.Unmarshal([]byte(obj), &v) != nil || v.Response == nil || v.Status == nil || v.Confidence == nil {
			return answer{}, false // the object ending the text is not the answer
		}
		status := brain.ConversationStatus(*v.Status)
		if !status.Valid() || math.IsNaN(*v.Confidence) {
			return answer{}, false
		}
		a := answer{Response: strings.TrimSpace(*v.Response), Status: status,
			Confidence: min(1, max(0, *v.Confidence)), statusSet: true}
		if v.Topic != nil {
			a.Topic = brain.CleanTopic(*v.Topic)
		}
		return a, true
	}
	return answer{}, false
}

// parseAnswerJSON reads text as the structured answer; ok is false unless text, fence aside,
// is one JSON object (repaired if need be) with at least one of the answer's fields.
func parseAnswerJSON(text string) (answer, bool) {
	if !strings.HasPrefix(stripFences(text), "{") {
		return answer{}, false // prose, whatever it quotes
	}
	// RepairJSON fails when anything but blanks follows the object: the repair re-emits
	// every token it reads, so trailing prose leaves invalid JSON.
	raw, err := RepairJSON(text)
	if err != nil {
		return answer{}, false
	}
	// Fields are read one by one, leniently: a null, missing or oddly typed field must not
	// turn the whole object into text shown to the user.
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return answer{}, false
	}
	resp, hasResp := v["response"]
	_, hasStatus := v["status"]
	_, hasConf := v["confidence"]
	if !hasResp && !hasStatus && !hasConf {
		return answer{}, false // some other JSON: taken as text
	}
	a := answer{Status: brain.StatusActive, Confidence: 1}
	var str string
	switch {
	case json.Unmarshal(resp, &str) == nil:
		a.Response = strings.TrimSpace(str)
	case hasResp && string(resp) != "null":
		a.Response = string(resp) // a number or an object: its JSON is the best there is
	}
	var status string
	if json.Unmarshal(v["status"], &status) == nil {
		if s := brain.ConversationStatus(strings.ToLower(strings.TrimSpace(status))); s.Valid() {
			a.Status, a.statusSet = s, true
		}
	}
	if conf, ok := number(v["confidence"]); ok {
		a.Confidence = min(1, max(0, conf))
	}
	var topic string
	if json.Unmarshal(v["topic"], &topic) == nil {
		a.Topic = brain.CleanTopic(topic) // null, missing or not a string: none
	}
	return a, true
}

// number reads a JSON number, or a string holding one ("0.7").
func number(raw json.RawMessage) (float64, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(strings.TrimSpace(s))
	}
	var f float64
	if !json.Valid(raw) || bytes.Equal(raw, []byte("null")) || json.Unmarshal(raw, &f) != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// stripFences removes a Markdown code fence (``` or ```json) around s.
func stripFences(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
		s = s[nl+1:] // drop the info string ("json")
	} else if i := strings.IndexAny(s, "{["); i > 0 && isInfoString(s[:i]) {
		s = s[i:] // an info string on the line of the value: ```json {…}```
	}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, "```")
	return strings.TrimSpace(s)
}

// isInfoString reports whether s is a code fence's info string: one word of letters and
// digits ("json", "JSON5"), blanks around it.
func isInfoString(s string) bool {
	s = strings.TrimSpace(s)
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// errUnrepairable is returned by RepairJSON when no repair gives a JSON object.
var errUnrepairable = errors.New("not a JSON object, even after repair")

// RepairJSON returns s as a compact JSON object, repairing the near-misses models make:
// code fences, single-quoted strings, unquoted keys, Python literals (True, False, None),
// trailing commas, and missing closing quotes, brackets or braces. It returns an error
// when the result is still not a JSON object.
func RepairJSON(s string) (json.RawMessage, error) {
	s = stripFences(s)
	if s == "" {
		s = "{}" // a model calling a tool without arguments
	}
	if isObject(s) {
		return compact(s)
	}
	fixed := repair(s)
	if !isObject(fixed) {
		return nil, errUnrepairable
	}
	return compact(fixed)
}

func isObject(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

func compact(s string) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, errUnrepairable
	}
	return buf.Bytes(), nil
}

// repair rewrites s token by token: strings are re-emitted double-quoted, bare words
// become keys or JSON literals, trailing commas are dropped and open containers closed.
func repair(s string) string {
	out := make([]byte, 0, len(s)+8)
	var stack []byte // expected closers
	// dropTrailingComma removes a comma (and the blanks after it) just written.
	dropTrailingComma := func() {
		j := len(out)
		for j > 0 && (out[j-1] == ' ' || out[j-1] == '\t' || out[j-1] == '\r' || out[j-1] == '\n') {
			j--
		}
		if j > 0 && out[j-1] == ',' {
			out = out[:j-1]
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '{' || c == '[':
			out = append(out, c)
			if c == '{' {
				stack = append(stack, '}')
			} else {
				stack = append(stack, ']')
			}
			i++
		case c == '}' || c == ']':
			dropTrailingComma()
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			out = append(out, c)
			i++
		case c == '"' || c == '\'':
			str, n := readString(s[i:], c)
			out = append(out, str...)
			i += n
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			word := s[i:j]
			switch word {
			case "True", "true":
				out = append(out, "true"...)
			case "False", "false":
				out = append(out, "false"...)
			case "None", "null", "nil", "undefined":
				out = append(out, "null"...)
			default:
				if isNumber(word) {
					out = append(out, word...)
				} else {
					b, _ := json.Marshal(word) // a bare key or word
					out = append(out, b...)
				}
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	dropTrailingComma()
	for k := len(stack) - 1; k >= 0; k-- {
		out = append(out, stack[k])
	}
	return string(out)
}

// readString reads a string literal starting at s[0] (quoted by q) and returns it as a
// JSON string and the number of bytes consumed; an unterminated string runs to the end.
func readString(s string, q byte) (string, int) {
	var sb strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			next := s[i+1]
			switch {
			case next == '\'' && q == '\'':
				sb.WriteByte('\'')
			case next == '"' || next == '\\' || next == '/':
				sb.WriteByte(next)
			case next == 'n':
				sb.WriteByte('\n')
			case next == 't':
				sb.WriteByte('\t')
			case next == 'r':
				sb.WriteByte('\r')
			default:
				sb.WriteByte('\\')
				sb.WriteByte(next)
			}
			i += 2
			continue
		}
		if c == q {
			i++
			break
		}
		sb.WriteByte(c)
		i++
	}
	b, _ := json.Marshal(sb.String())
	return string(b), i
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '+' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c >= 0x80
}

func isNumber(w string) bool {
	var f float64
	return json.Unmarshal([]byte(w), &f) == nil
}
