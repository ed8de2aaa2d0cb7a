package innerlife

import "time"

// Kinds of journal entry.
var entryKinds = []string{"observation", "reflection", "realization", "intention", "question", "memory", "gratitude", "frustration"}

// Entry is one private journal entry.
type Entry struct {
	Chat int64     `json:"chat"`
	Kind string    `json:"kind"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// Journal limits.
const (
	MaxEntryChars  = 400
	JournalEvery   = 5 * time.Minute
	promptEntries  = 3
	thoughtsListed = 5
)
