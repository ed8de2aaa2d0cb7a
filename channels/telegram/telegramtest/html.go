package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// UTF16Len is the length of s in UTF-16 code units, the unit Telegram counts message
// length (and entity offsets) in.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // invalid UTF-8 ranges as U+FFFD, length 1
	}
	return n
}

// allowedTags lists Telegram's HTML subset and the attributes each tag may carry.
var allowedTags = map[string][]string{
	"b": nil, "strong": nil, "i": nil, "em": nil, "u": nil, "ins": nil,
	"s": nil, "strike": nil, "del": nil, "tg-spoiler": nil,
	"span":       {"class"},
	"a":          {"href"},
	"code":       {"class"},
	"pre":        nil,
	"blockquote": {"expandable"},
	"tg-emoji":   {"emoji-id"},
}

// ParseHTML parses s as Telegram's HTML parse mode does and returns the visible text
// (tags removed, entities decoded). Its error reads like the part of Telegram's answer
// after "Bad Request: can't parse entities: ".
//
// It is deliberately at least as strict as Telegram: every '<', '>' and '&' that is not
// part of a tag or an entity must be escaped, tags must be in the supported subset with
// their allowed attributes, and tags must be balanced and properly nested. Inside <code>
// no tags are allowed; inside <pre> only <code>.
func ParseHTML(s string) (string, error) {
	var (
		out   strings.Builder
		stack []string
	)
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("Unclosed start tag at byte offset %d", i)
			}
			raw := s[i+1 : i+end]
			if strings.HasPrefix(raw, "/") {
				name := strings.ToLower(strings.TrimSpace(raw[1:]))
				if len(stack) == 0 {
					return "", fmt.Errorf("Unexpected end tag at byte offset %d", i)
				}
				if top := stack[len(stack)-1]; top != name {
					return "", fmt.Errorf("Can't find end tag corresponding to start tag \"%s\"", top)
				}
				stack = stack[:len(stack)-1]
			} else {
				name, attrs, err := parseTag(raw, i)
				if err != nil {
					return "", err
				}
				if err := checkTag(name, attrs, stack, i); err != nil {
					return "", err
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '>':
			return "", fmt.Errorf("Unexpected character '>' at byte offset %d: must be escaped as &gt;", i)
		case '&':
			r, n, ok := decodeEntity(s[i:])
			if !ok {
				return "", fmt.Errorf("Character '&' at byte offset %d must be escaped as &amp;", i)
			}
			out.WriteString(r)
			i += n
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			out.WriteRune(r)
			i += n
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1])
	}
	return out.String(), nil
}

// parseTag splits the inside of a start tag into its name and attributes.
func parseTag(raw string, at int) (string, map[string]string, error) {
	raw = strings.TrimSuffix(raw, "/")
	nameEnd := strings.IndexAny(raw, " \t\n\r")
	if nameEnd < 0 {
		nameEnd = len(raw)
	}
	name := strings.ToLower(raw[:nameEnd])
	if name == "" {
		return "", nil, fmt.Errorf("Empty tag name at byte offset %d", at)
	}
	attrs := map[string]string{}
	rest := raw[nameEnd:]
	for {
		rest = strings.TrimLeft(rest, " \t\n\r")
		if rest == "" {
			return name, attrs, nil
		}
		k := strings.IndexAny(rest, "= \t\n\r")
		if k < 0 {
			attrs[strings.ToLower(rest)] = ""
			return name, attrs, nil
		}
		key := strings.ToLower(rest[:k])
		rest = rest[k:]
		if !strings.HasPrefix(rest, "=") {
			attrs[key] = ""
			continue
		}
		rest = rest[1:]
		var val string
		if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
			q := rest[0]
			e := strings.IndexByte(rest[1:], q)
			if e < 0 {
				return "", nil, fmt.Errorf("Unclosed attribute value in tag \"%s\" at byte offset %d", name, at)
			}
			val, rest = rest[1:1+e], rest[2+e:]
		} else {
			e := strings.IndexAny(rest, " \t\n\r")
			if e < 0 {
				e = len(rest)
			}
			val, rest = rest[:e], rest[e:]
		}
		dec, err := decodeEntities(val)
		if err != nil {
			return "", nil, fmt.Errorf("%s in attribute of tag \"%s\" at byte offset %d", err.Error(), name, at)
		}
		attrs[key] = dec
	}
}

// checkTag validates a start tag against the subset and its nesting position.
func checkTag(name string, attrs map[string]string, stack []string, at int) error {
	allowed, ok := allowedTags[name]
	if !ok {
		return fmt.Errorf("Unsupported start tag \"%s\" at byte offset %d", name, at)
	}
	for k := range attrs {
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			return fmt.Errorf("Unsupported attribute \"%s\" in tag \"%s\" at byte offset %d", k, name, at)
		}
	}
	switch name {
	case "a":
		if attrs["href"] == "" {
			return fmt.Errorf("Tag \"a\" must have attribute \"href\" at byte offset %d", at)
		}
	case "span":
		if attrs["class"] != "tg-spoiler" {
			return fmt.Errorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", at)
		}
	case "tg-emoji":
		if attrs["emoji-id"] == "" {
			return fmt.Errorf("Tag \"tg-emoji\" must have attribute \"emoji-id\" at byte offset %d", at)
		}
	}
	if len(stack) > 0 {
		switch parent := stack[len(stack)-1]; parent {
		case "code":
			return fmt.Errorf("Unsupported start tag \"%s\" inside \"code\" at byte offset %d", name, at)
		case "pre":
			if name != "code" {
				return fmt.Errorf("Unsupported start tag \"%s\" inside \"pre\" at byte offset %d", name, at)
			}
		}
	}
	return nil
}

// decodeEntities decodes every entity in s, failing on a bare '&' or '<'.
func decodeEntities(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch s[i] {
		case '&':
			r, n, ok := decodeEntity(s[i:])
			if !ok {
				return "", fmt.Errorf("Character '&' must be escaped")
			}
			b.WriteString(r)
			i += n
		case '<':
			return "", fmt.Errorf("Character '<' must be escaped")
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

// decodeEntity decodes the entity at the start of s (which begins with '&'): the four
// named entities Telegram supports and numeric ones.
func decodeEntity(s string) (string, int, bool) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 12 {
		return "", 0, false
	}
	body := s[1:semi]
	switch body {
	case "lt":
		return "<", semi + 1, true
	case "gt":
		return ">", semi + 1, true
	case "amp":
		return "&", semi + 1, true
	case "quot":
		return "\"", semi + 1, true
	}
	if body[0] != '#' {
		return "", 0, false
	}
	var (
		n   uint64
		err error
	)
	if len(body) > 1 && (body[1] == 'x' || body[1] == 'X') {
		n, err = strconv.ParseUint(body[2:], 16, 32)
	} else {
		n, err = strconv.ParseUint(body[1:], 10, 32)
	}
	if err != nil || n == 0 || n > utf8.MaxRune {
		return "", 0, false
	}
	return string(rune(n)), semi + 1, true
}
