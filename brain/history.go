package brain

import "time"

// Turn is one message of a conversation's history.
type Turn struct {
	Seq  uint64      `json:"seq,omitempty"`
	Role string      `json:"role"` // "user" | "assistant"
	Text string      `json:"text"`
	At   time.Time   `json:"at"`
	Kind MessageKind `json:"kind,omitempty"` // for assistant turns
}

// Fact is something anima knows about a user (from core_remember).
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
}

// Recall is what memory contributes to a prompt: facts, the persisted summary of older
// turns, the last turns verbatim, and memories relevant to the wake.
type Recall struct {
	Facts    []Fact
	Summary  string
	Turns    []Turn
	Memories []Hit
}
