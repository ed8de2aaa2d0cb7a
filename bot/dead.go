package bot

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anima-bot/anima/bot/config"
	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/loop"
	"github.com/anima-bot/anima/storage"
)

// deadPruneEvery is how often the running service deletes dead letters older than
// storage.DeadKeep (the store compactor's timer; it also prunes when it starts).
const deadPruneEvery = time.Hour

// pruneDead deletes the dead letters kept longer than storage.DeadKeep.
func (c *storeCompactor) pruneDead() {
	if c.clock == nil {
		return
	}
	n, err := c.store.PruneDead(c.clock.Now())
	if err != nil {
		c.log.Error("prune dead letters", "err", err)
		return
	}
	if n > 0 {
		c.log.Info("dead letters older than a week deleted", "dead_letters", n)
	}
}

// ErrNotAllowed is returned (wrapped) for a retry of a dead letter that concerns a user
// anima no longer answers (not in telegram.allowed_users, and telegram.public off): the
// letter is kept, and can be retried once the user is allowed again.
var ErrNotAllowed = errors.New("not in telegram.allowed_users")

// MayRetry returns nil if anima, configured with t, answers every user d concerns (its
// user, a private chat's user, the senders of its signals), else an error wrapping
// ErrNotAllowed: a retry would send to, or run for, someone it no longer talks to.
func MayRetry(d brain.DeadLetter, t config.TelegramConfig) error {
	if t.Public {
		return nil
	}
	users := []int64{d.User, privateChatUser(d.Chat)}
	for _, s := range d.Signals {
		users = append(users, s.User)
	}
	for _, u := range users {
		if u != 0 && !slices.Contains(t.AllowedUsers, u) {
			return fmt.Errorf("dead letter %d not retried (kept): user %d: %w", d.ID, u, ErrNotAllowed)
		}
	}
	return nil
}

// privateChatUser is the user of a private chat (Telegram gives it the user's id; groups
// have negative ids), 0 for a group.
func privateChatUser(chat int64) int64 {
	if chat > 0 {
		return chat
	}
	return 0
}

// storeOptions are the store's options from cfg: its dead-letter caps.
func storeOptions(cfg config.Config) storage.Options {
	return storage.Options{DeadPerUser: cfg.Storage.DeadLetters.PerUser, DeadPerChat: cfg.Storage.DeadLetters.PerChat}
}

// deadLetters answers `anima dead` on the control socket: it lists and shows the store's
// dead letters, and retries one by putting it back in the store and handing it to the
// running loop (a refused message to the outbox, a run's signals to the inbox).
type deadLetters struct {
	store *storage.Store
	loop  *loop.Loop
	inbox *loop.Inbox
	now   func() time.Time
	// may refuses a retry (MayRetry with the service's telegram section); nil: any.
	may func(brain.DeadLetter) error
}

// retry puts dead letter id back into the store and hands it to the running loop, unless
// may refuses it (it is then kept). What the loop does not take before ctx ends stays in
// the store for the next start.
func (d *deadLetters) retry(ctx context.Context, id uint64) (brain.DeadLetter, error) {
	if d.may != nil {
		// A letter never changes once buried: what is checked is what is revived.
		letter, err := d.store.DeadLetter(id)
		if err != nil {
			return brain.DeadLetter{}, err
		}
		if err := d.may(letter); err != nil {
			return brain.DeadLetter{}, err
		}
	}
	rv, err := d.store.Revive(id, d.now())
	if err != nil {
		return brain.DeadLetter{}, err
	}
	if err := d.loop.Redeliver(ctx, rv.Outbox); err != nil {
		return rv.Letter, fmt.Errorf("retry dead letter %d: hand its message to the loop: %w", id, err)
	}
	if err := d.inbox.Submit(ctx, rv.Inbox...); err != nil {
		return rv.Letter, fmt.Errorf("retry dead letter %d: hand its signals to the loop: %w", id, err)
	}
	return rv.Letter, nil
}

// deadAnswer is the control socket's answer to a dead request: one JSON line.
type deadAnswer struct {
	Letters []brain.DeadLetter `json:"letters,omitempty"`
	Error   string             `json:"error,omitempty"`
	// Missing says the id is not kept (storage.ErrNoDeadLetter).
	Missing bool `json:"missing,omitempty"`
	// Refused says the retry was refused, the letter kept (ErrNotAllowed).
	Refused bool `json:"refused,omitempty"`
}

// serveDead answers a control request "dead list", "dead show ID" or "dead retry ID"
// (req is what follows "dead ").
func (c *controlServer) serveDead(w io.Writer, req string) {
	var ans deadAnswer
	var err error
	if c.dead == nil {
		err = errors.New("dead letters are not served by this process")
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), c.writeTimeout)
		ans.Letters, err = deadRequest(ctx, req, c.dead.store, c.dead.retry)
		cancel()
	}
	if err != nil {
		ans.Error, ans.Missing, ans.Refused = err.Error(), errors.Is(err, storage.ErrNoDeadLetter), errors.Is(err, ErrNotAllowed)
		c.log.Warn("dead letter request", "request", req, "err", err)
	} else if strings.HasPrefix(req, "retry ") {
		c.log.Info("dead letter retried", "id", ans.Letters[0].ID, "kind", ans.Letters[0].Kind, "chat", ans.Letters[0].Chat)
	}
	_ = json.NewEncoder(w).Encode(ans)
}

// deadRequest carries out req ("list", "show ID", "retry ID") on store, retrying through
// retry.
func deadRequest(ctx context.Context, req string, store *storage.Store,
	retry func(context.Context, uint64) (brain.DeadLetter, error)) ([]brain.DeadLetter, error) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(req), " ")
	if verb == "list" && arg == "" {
		return store.DeadLetters()
	}
	id, err := strconv.ParseUint(arg, 10, 64)
	if err != nil || (verb != "show" && verb != "retry") {
		return nil, fmt.Errorf("unknown dead letter request %q", req)
	}
	var d brain.DeadLetter
	if verb == "show" {
		d, err = store.DeadLetter(id)
	} else {
		d, err = retry(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	return []brain.DeadLetter{d}, nil
}

// Dead carries out an `anima dead` request on the store at storePath: "list", "show ID" or
// "retry ID". If the service is running it asks it over the control socket (a retried
// letter goes straight to its loop, unless the service refuses it: an error wrapping
// ErrNotAllowed); otherwise it opens the store itself, and a retried letter waits in the
// outbox or inbox for the next start (the caller checks MayRetry first: `anima dead`
// does). Errors wrap storage.ErrNoDeadLetter for an id the store does not keep.
func Dead(ctx context.Context, storePath, req string) ([]brain.DeadLetter, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", ControlSocket(storePath))
	if err == nil {
		defer conn.Close()
		return askDead(conn, req)
	}
	// Nobody answers: the service is not running, so open the store ourselves.
	if _, statErr := os.Stat(storePath); statErr != nil {
		return nil, fmt.Errorf("dead letters: no store at %s: %w", storePath, statErr)
	}
	st, err := storage.Open(storePath, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	out, err := deadRequest(ctx, req, st, func(_ context.Context, id uint64) (brain.DeadLetter, error) {
		rv, err := st.Revive(id, time.Now())
		return rv.Letter, err
	})
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return out, err
}

// askDead sends req to the running service and decodes its answer.
func askDead(conn net.Conn, req string) ([]brain.DeadLetter, error) {
	_ = conn.SetDeadline(time.Now().Add(controlWriteTimeout))
	if _, err := io.WriteString(conn, "dead "+req+"\n"); err != nil {
		return nil, fmt.Errorf("dead letters: ask the running service: %w", err)
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return nil, errors.New("dead letters: the running service sent nothing (see its log)")
	}
	var ans deadAnswer
	if err := json.Unmarshal(line, &ans); err != nil {
		return nil, fmt.Errorf("dead letters: the running service answered %q", strings.TrimSpace(string(line)))
	}
	switch {
	case ans.Missing:
		return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(ans.Error, ": "+storage.ErrNoDeadLetter.Error()), storage.ErrNoDeadLetter)
	case ans.Refused:
		return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(ans.Error, ": "+ErrNotAllowed.Error()), ErrNotAllowed)
	case ans.Error != "":
		return nil, errors.New(ans.Error)
	}
	return ans.Letters, nil
}
