package brain

import "time"

// Turn is one message of a conversation's history.
type Turn struct {
	Seq  uint64      `json:"seq,omitempty"`
	Role string      `json:"role"` // "user" | "assistant"
	Text string      `json:"text"`
	At   time.Time   `json:"at"`
	Kind MessageKind `json:"kind,omitempty"` // for assistant turns
	// User is who wrote a user turn, or whom an assistant turn answered; Name is the
	// writer's first name (user turns). Both are 0/"" in turns stored before anima
	// recorded them. In a group they tell the members' lines apart and say whose a turn
	// is for /forget.
	User int64  `json:"user,omitempty"`
	Name string `json:"name,omitempty"`
}

// Fact is something anima knows about a user (from core_remember). Facts are kept per
// chat and user: a private chat's facts are the user's private facts, a group's are what
// that member said in that group.
type Fact struct {
	Attribute string    `json:"attribute"`
	Value     string    `json:"value"`
	At        time.Time `json:"at"`
}

// Hit is one memory search result.
type Hit struct {
	Source string    `json:"source"` // "turn" | "summary" | "fact"
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
	Score  float64   `json:"score"`
	// Said, in a memory of several turns recalled together (its Text a line each), is
	// when each was said, oldest first; nil for a single turn (At) or another source.
	Said []time.Time `json:"said,omitempty"`
}

// Times is when the turns h holds were said: Said, or At alone.
func (h Hit) Times() []time.Time {
	if len(h.Said) > 0 {
		return h.Said
	}
	return []time.Time{h.At}
}

// Recall is what memory contributes to a prompt: facts, the persisted summary of older
// turns, the last turns verbatim, and memories relevant to the wake.
type Recall struct {
	Facts    []Fact
	Summary  string
	Turns    []Turn
	Memories []Hit
	// HowTheyAre are the notes of how the person is (in a group, the members in the
	// turns, the wake's member first), each with its lines as stored: a prompt shows the
	// fresh ones (FreshLines).
	HowTheyAre []StateNote
	// Sections are the plugins' prompt sections for the run.
	Sections []Section
}

// Section is a part of a prompt a plugin contributes (plugins.Contextual): a title and
// lines, shown to the model as untrusted data within the prompt's budget, and intents
// applied with the run's turn whether or not the lines fit.
type Section struct {
	Source  string // the plugin's name
	Title   string // one line, for example "Your private journal (latest first)"
	Lines   []string
	Intents []Intent
	// Topics are what of the section a first message could bring up (an event of theirs,
	// with its day), as data: the run chooses among them in code, never by reading Lines.
	Topics []Topic
}
