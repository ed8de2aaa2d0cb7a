// Package plugins is the API for extending anima. A plugin is compiled in, listed once in
// package bot (no init() registration) and switched under plugins.<name> in the
// configuration. A plugin needs only a name (Plugin); everything else it can do is an
// optional interface, found with a type assertion: offer tools (Toolbox), run neurons on
// every tick (Sensor), keep state in its own bucket (Stateful), run daily jobs on the
// loop's clock (Scheduled), add a section to prompts (Contextual), be found by
// core_memory_search (Searchable), add to /status (Reporter) and answer commands
// (Commander). Install wires them in:
// tools go through the same registry as the core tools (strict schemas, capability
// profiles), and every part is guarded, so a failing plugin is logged and counted
// (anima_plugin_errors_total{plugin,part}), never fatal to the brain.
package plugins

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anima-bot/anima/brain"
)

// Plugin is one extension of anima: a name, and whichever of the optional interfaces
// below it implements.
type Plugin interface {
	// Name is a short lower-case identifier, used in logs, metrics, as the tools' name
	// prefix (tools are named "<name>_<verb>"), as its configuration section
	// (plugins.<name>) and as its bucket's name.
	Name() string
}

// Env is what anima gives a built-in plugin it builds from its configuration section
// (each plugin's Config.Plugin); any field may be nil.
type Env struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	Clock      brain.Clock // the loop's clock (simulated under `anima sim`)
}

// Toolbox is a plugin that offers the model tools.
type Toolbox interface {
	// Tools are the plugin's tools, each named "<name>_<verb>".
	Tools() []brain.Tool
}

// Sensor is a plugin with neurons: cheap sensors run on every tick.
type Sensor interface {
	// Neurons must not block, call the network or allocate on an idle tick.
	Neurons() []brain.Neuron
}

// Stateful is a plugin with state of its own in the store, in a bucket only it uses. Its
// tools change that state by returning brain.PluginChange intents (Plugin set to its
// name, Chat and User to where and whose: in a group, the member the change is about,
// normally the speaker of brain.ToolCall.User). A change without a User is refused before
// Apply sees it. The journal calls Apply with them inside the turn's transaction, so a
// crash never leaves half a change. A plugin that keeps an in-memory copy updates it in a
// Bucket.OnCommit callback.
//
// State is scoped like the core's: what a plugin keeps about a member of a group is keyed
// by the chat and that member, never shown to another member (sections, searches and
// reports all get the subject user), and goes with that member's /forget.
type Stateful interface {
	// Load reads the plugin's state once at start, in a read-write transaction (so it may
	// migrate its own keys). An error stops anima from starting.
	Load(b Bucket) error
	// Apply applies one of the plugin's own changes inside a turn's transaction (at is the
	// turn's time; c.Chat and c.User are set). An error rolls the whole turn back; it
	// runs again.
	Apply(b Bucket, c brain.PluginChange, at time.Time) error
	// Forget deletes everything the plugin holds about user, in every chat: their private
	// chat and what it keeps about them in groups (/forget).
	Forget(b Bucket, user int64) error
}

// Bucket is a plugin's own key-value space inside one store transaction.
type Bucket interface {
	// Get returns the value under key (nil if absent); it is valid until the
	// transaction ends.
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	// Scan calls fn for every key with prefix, in key order; an error stops it.
	Scan(prefix []byte, fn func(k, v []byte) error) error
	// OnCommit runs fn after the transaction commits (never if it rolls back).
	OnCommit(fn func())
}

// Contextual is a plugin that adds a section to prompts.
type Contextual interface {
	// Context returns the plugin's section for the run of w at now (a section without
	// lines adds nothing): only what is kept for w.Chat and w.User, the subject of the run
	// (in a group, the member who spoke). It is called off the core loop's goroutine, concurrently for
	// different chats, and must not block on the network. The lines are shown to the
	// model as untrusted data, inside the prompt's budget; the section's intents are
	// applied with the run's turn (a due check-in the run carries, say).
	Context(w brain.Wake, now time.Time) brain.Section
}

// Scheduled is a plugin with jobs that run daily on the loop's clock.
type Scheduled interface {
	Jobs() []Job
}

// Job is a daily job in the users' own time zones. It runs off the core loop's tick, on
// the loop's clock (so `anima sim` and tests run it under a simulated clock), once a day
// in each zone some user is in, for the chats in that zone. A run missed while anima was
// down runs once at the next start if it is less than 12 h late; otherwise it is skipped.
type Job struct {
	// Name is unique within the plugin (it keys the job's last runs in the store).
	Name string
	// At is the local time "HH:MM" the job runs every day, in each user's zone (their
	// /timezone, else the default user.timezone).
	At string
	// Run does the job for chats, the relationships (as last saved) whose zone reached At
	// at due. An error or a panic is logged and counted; the job runs again the next day.
	Run func(ctx context.Context, h Host, due time.Time, chats []brain.Relationship) error
}

// Host is what anima offers a plugin's jobs.
type Host interface {
	// Chats lists the relationships as last saved by the core loop.
	Chats() ([]brain.Relationship, error)
	// Think runs cognition for w (a dream, say) and returns what it decided.
	Think(ctx context.Context, w brain.Wake) (brain.Outcome, error)
	// Commit applies intents that belong in a turn (brain.HomeOf InTurn: facts,
	// schedules, plugin changes) for chat in one transaction, without history or
	// messages. Messages among them are dropped.
	Commit(ctx context.Context, chat, user int64, intents []brain.Intent, at time.Time) error
	// Recent returns up to n of chat's latest turns, oldest first.
	Recent(chat int64, n int) ([]brain.Turn, error)
}

// Searchable is a plugin whose own records core_memory_search also finds (the inner
// life's concerns, dormant ones included, and its older journal entries).
type Searchable interface {
	// Search returns up to limit of the records kept for user in chat matching query,
	// best first, read from the plugin's bucket b (a read-only transaction); never another
	// member's. Hit.Source names the kind of record.
	Search(b Bucket, chat, user int64, query string, limit int) ([]brain.Hit, error)
}

// Reporter is a plugin that adds to the /status answer.
type Reporter interface {
	// Status returns lines for user's /status in chat ("" adds nothing): only what is
	// kept for user there, never another member's.
	Status(chat, user int64, now time.Time, loc *time.Location) string
}

// Commander is a plugin that owns commands.
type Commander interface {
	// Command answers user's command in chat that the core does not know (name with its
	// slash, lower case), about user's own records only; false means the plugin does not
	// own it either. It must not call a model.
	Command(chat, user int64, name, arg string, now time.Time, loc *time.Location) (string, bool)
}

// Detailer is a Reporter whose lines for /status details (the numbers and exact times
// behind its plain /status words) differ from its Status lines.
type Detailer interface {
	StatusDetails(chat, user int64, now time.Time, loc *time.Location) string
}

// ToolRegistry is where plugin tools are registered (cognition's registry satisfies it).
type ToolRegistry interface {
	Register(t brain.Tool) error
}

// Error is a plugin that could not be installed.
type Error struct {
	Plugin string
	Err    error
}

func (e *Error) Error() string { return "plugin " + e.Plugin + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
