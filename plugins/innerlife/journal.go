package innerlife

import "time"

// Kinds of journal entry.
var entryKinds = []string{"observation", "reflection", "realization", "intention", "question", "memory", "gratitude", "frustration"}

// Entry is one private journal entry.
type Entry struct {
	Chat int64 `json:"chat"`
	// User is whom the entry is about (in a group, the member who spoke).
	User int64     `json:"user"`
	Kind string    `json:"kind"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	// Folded is set once a dream folded the entry into a Reflection: it leaves prompts
	// and /thoughts and stays searchable.
	Folded bool `json:"folded,omitempty"`

	seq uint64 // its key's sequence number (entryKey)
}

func (e Entry) subject() subject { return subject{e.Chat, e.User} }

func (e Entry) key() []byte { return entryKey(e.subject(), e.At, e.seq) }

// Journal limits: at most one entry per JournalEvery, and at most Config.JournalPerDay
// (default DefaultJournalPerDay) per JournalWindow, for one user in one chat.
const (
	MaxEntryChars        = 400
	JournalEvery         = 5 * time.Minute
	JournalWindow        = 24 * time.Hour
	DefaultJournalPerDay = 10
	promptEntries        = 3
	thoughtsListed       = 5
)
