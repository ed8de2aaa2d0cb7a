package brain

import (
	"strings"
	"time"
	"unicode"
)

// Profile is a cognition capability profile: which tools a run may use.
type Profile string

// Capability profiles.
const (
	ProfileChat      Profile = "chat"      // the conversation's tools
	ProfileProactive Profile = "proactive" // no state-changing tools beyond scheduling and deferring
	ProfileDream     Profile = "dream"     // memory tools only
)

// Reason says why cognition was woken: a short machine code (a metrics label) and a human
// sentence for the logs. The model never reads either: cognition says why it was woken in
// its own words (the prompt's brief and ask).
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// Wake reason codes.
const (
	ReasonUserMessage = "user_message"
	ReasonSchedule    = "schedule_due"
	ReasonThought     = "thought"
	ReasonProactive   = "proactive"
	ReasonFollowup    = "followup"
	// ReasonConcernCheckin is a gated thought of the inner life: anima means to ask how
	// something the user cares about went.
	ReasonConcernCheckin = "concern_checkin"
)

// Wake asks cognition to think about one chat.
type Wake struct {
	Chat    int64   `json:"chat"`
	User    int64   `json:"user"`
	Reason  Reason  `json:"reason"`
	Profile Profile `json:"profile"`
	// Gated is set on a wake for gated thoughts (anima's own initiative that passed the
	// proactive gates); the core loop books it as proactive contact.
	Gated bool `json:"gated,omitempty"`
	// Signals are what triggered the wake; several user messages that arrived while an
	// earlier run for the chat was in flight are folded into one wake.
	Signals []Signal `json:"signals,omitempty"`
	// Rel is a snapshot of the relationship when the wake was made.
	Rel Relationship `json:"rel"`
	// Loc is the user's time zone (State.Location of Rel), looked up once when the wake
	// was made; nil means the default zone.
	Loc *time.Location `json:"-"`
	At  time.Time      `json:"at"`
	// Drafter, when set, shows the answer as it is written (see Drafter); nil means the
	// answer is only sent when it is complete.
	Drafter Drafter `json:"-"`
}

// UserName is the first name of the person the wake is about ("the user" if unknown),
// cleaned for use inside a prompt or a log line: one line, no control characters, at
// most 64 characters (Telegram's own limit for a first name).
func (w *Wake) UserName() string {
	name := w.Rel.Name
	for _, s := range w.Signals {
		if name != "" {
			break
		}
		name = s.UserName
	}
	if name = CleanName(name); name == "" {
		return "the user"
	}
	return name
}

// CleanName makes a display name fit for a prompt or a log line: one line, no control
// characters, at most 64 characters (Telegram's own limit for a first name).
func CleanName(name string) string {
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	return TruncateRunes(name, 64)
}

// Outcome is what a cognition run decided.
type Outcome struct {
	Intents    []Intent
	Status     ConversationStatus
	Confidence float64
	// Requests is how many model requests the run made.
	Requests int
	// Model is the model that wrote the answer; Tokens the prompt and completion tokens
	// of every request of the turn (a smart retry's included).
	Model  string
	Tokens int
}
