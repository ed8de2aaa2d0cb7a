// Package bench measures memory's recall on long conversations in LoCoMo's format
// ("Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024): each
// conversation is written into a fresh bbolt store through the service's own path (the
// turn's commit with the index in its transaction, memory's upkeep after it, each session
// at its own date), and each question is put to the Recall the prompt builder calls,
// without writing it into the history. A question is judged by whether the turns that
// hold its answer (its evidence) are in what Recall returned, matched by the turns'
// identity. `anima bench memory` runs it.
package bench

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conversation is one LoCoMo conversation between speaker A and speaker B.
type Conversation struct {
	// Name is what the report calls it: the file's name when the file holds only it,
	// else its sample_id.
	Name     string
	SampleID string
	SpeakerA string
	SpeakerB string
	Sessions []Session
	QA       []Question
}

// Session is one sitting of the conversation, at its date.
type Session struct {
	N     int
	At    time.Time
	Turns []Line
}

// Line is one turn of a session as LoCoMo gives it.
type Line struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	// Photo is set for a turn that shared an image (LoCoMo's img_url or blip_caption).
	Photo bool `json:"-"`
}

// Question is one question about the conversation with the ids of the turns that hold
// its answer.
type Question struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// Category names LoCoMo's question categories.
var Category = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// sessionLayout is how LoCoMo writes a session's date: "1:56 pm on 8 May, 2023".
const sessionLayout = "3:04 pm on 2 January, 2006"

// Load reads the conversations of a LoCoMo file: one conversation object, or an array
// of them (as locomo10.json holds). A conversation's speakers and sessions are under its
// "conversation" key, or at its top level beside "qa" (the release's one-conversation
// files, data/multimodal_dialog/*/NN.json).
func Load(path string) ([]Conversation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read conversations: %w", err)
	}
	var objs []json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &objs); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
	} else {
		objs = []json.RawMessage{raw}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s holds no conversation", path)
	}
	out := make([]Conversation, 0, len(objs))
	for i, o := range objs {
		c, err := decode(o)
		if err != nil {
			return nil, fmt.Errorf("%s: conversation %d: %w", path, i+1, err)
		}
		c.Name = filepath.Base(path)
		if len(objs) > 1 {
			c.Name = cmp.Or(c.SampleID, fmt.Sprintf("%s#%d", c.Name, i+1))
		}
		out = append(out, c)
	}
	return out, nil
}

// decode reads one conversation object.
func decode(raw []byte) (Conversation, error) {
	var obj struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []Question                 `json:"qa"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Conversation{}, fmt.Errorf("decode: %w", err)
	}
	c := Conversation{SampleID: obj.SampleID, QA: obj.QA}
	conv := obj.Conversation
	if conv == nil { // the release's one-conversation files: its keys at the top level
		if err := json.Unmarshal(raw, &conv); err != nil {
			return Conversation{}, fmt.Errorf("decode: %w", err)
		}
	}
	if err := errors.Join(json.Unmarshal(conv["speaker_a"], &c.SpeakerA), json.Unmarshal(conv["speaker_b"], &c.SpeakerB)); err != nil || c.SpeakerA == "" || c.SpeakerB == "" {
		return c, fmt.Errorf("conversation.speaker_a and speaker_b must name the two speakers")
	}
	for key, val := range conv {
		n, ok := sessionNumber(key)
		if !ok {
			continue
		}
		s, err := session(n, val, conv[key+"_date_time"], c.SpeakerA, c.SpeakerB)
		if err != nil {
			return c, err
		}
		if len(s.Turns) > 0 {
			c.Sessions = append(c.Sessions, s)
		}
	}
	if len(c.Sessions) == 0 {
		return c, fmt.Errorf("no session_N with turns")
	}
	slices.SortFunc(c.Sessions, func(a, b Session) int { return a.N - b.N })
	return c, nil
}

// sessionNumber is N of a key "session_N" (not of "session_N_date_time").
func sessionNumber(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, "session_")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// session decodes session n's turns and date.
func session(n int, turns, date json.RawMessage, a, b string) (Session, error) {
	var lines []struct {
		Line
		ImgURL      json.RawMessage `json:"img_url"`
		BlipCaption string          `json:"blip_caption"`
	}
	if err := json.Unmarshal(turns, &lines); err != nil {
		return Session{}, fmt.Errorf("session_%d: %w", n, err)
	}
	s := Session{N: n}
	for _, l := range lines {
		if l.Speaker != a && l.Speaker != b {
			return s, fmt.Errorf("session_%d turn %s: speaker %q is neither %q nor %q", n, l.DiaID, l.Speaker, a, b)
		}
		if l.DiaID == "" {
			return s, fmt.Errorf("session_%d: a turn without dia_id", n)
		}
		l.Photo = l.BlipCaption != "" || (len(l.ImgURL) > 0 && string(l.ImgURL) != "null")
		s.Turns = append(s.Turns, l.Line)
	}
	if len(s.Turns) == 0 {
		return s, nil
	}
	var when string
	if err := json.Unmarshal(date, &when); err != nil || when == "" {
		return s, fmt.Errorf("session_%d has turns but no session_%d_date_time", n, n)
	}
	at, err := time.Parse(sessionLayout, strings.TrimSpace(when))
	if err != nil {
		return s, fmt.Errorf("session_%d_date_time %q: want like %q: %w", n, when, "1:56 pm on 8 May, 2023", err)
	}
	s.At = at
	return s, nil
}

// evidenceIDs are the dia_ids a question's evidence names. LoCoMo mostly gives one id a
// string; a few strings hold several ("D8:6; D9:17").
func evidenceIDs(ev []string) []string {
	var ids []string
	for _, e := range ev {
		for f := range strings.FieldsFuncSeq(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			if !slices.Contains(ids, f) {
				ids = append(ids, f)
			}
		}
	}
	return ids
}
