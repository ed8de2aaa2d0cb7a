package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"
)

// Poll is one getUpdates call.
type Poll struct {
	Offset   int64 // the offset parameter (0 if absent)
	Limit    int
	Timeout  int     // seconds
	Returned []int64 // update ids returned
	At       time.Time
	// Answered is when the fake handed the updates out (built its answer); zero while the
	// long poll is still in progress.
	Answered time.Time
}

type queued struct {
	id  int64
	raw json.RawMessage
}

// getUpdates confirms the updates below the offset, then hands out the pending ones,
// long-polling up to timeout seconds while there are none; 409 while a webhook is set.
func (s *Server) getUpdates(ctx context.Context, p map[string]string, at time.Time) (any, *apiError) {
	offset, limit, timeout, aerr := pollParams(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	if s.webhookURL != "" {
		s.mu.Unlock()
		return nil, &apiError{code: http.StatusConflict, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	s.confirmLocked(offset)
	poll := Poll{Offset: offset, Limit: limit, Timeout: timeout, At: at}
	s.polls = append(s.polls, poll)
	idx := len(s.polls) - 1
	s.notifyLocked()

	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	for len(s.queue) == 0 && timeout > 0 {
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			timeout = 0
		case <-ctx.Done():
			timeout = 0
		case <-s.closed:
			timeout = 0
		}
		s.mu.Lock()
	}
	n := min(limit, len(s.queue))
	out := make([]json.RawMessage, n)
	ids := make([]int64, n)
	for i, q := range s.queue[:n] {
		out[i], ids[i] = q.raw, q.id
	}
	s.polls[idx].Returned = ids
	s.polls[idx].Answered = time.Now()
	s.notifyLocked()
	s.mu.Unlock()
	return out, nil
}

// pollParams reads getUpdates' offset, limit (1 to 100, default 100) and timeout
// (seconds, not below 0).
func pollParams(p map[string]string) (offset int64, limit, timeout int, aerr *apiError) {
	if v := p["offset"]; v != "" {
		o, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, 0, badRequest("invalid offset")
		}
		offset = o
	}
	limit = 100
	if v := p["limit"]; v != "" {
		l, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, 0, badRequest("invalid limit")
		}
		limit = min(max(l, 1), 100)
	}
	if v := p["timeout"]; v != "" {
		t, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, 0, badRequest("invalid timeout")
		}
		timeout = max(t, 0)
	}
	return offset, limit, timeout, nil
}

// confirmLocked forgets the updates below offset, Telegram's confirmation; a negative
// offset keeps the last -offset. s.mu must be held.
func (s *Server) confirmLocked(offset int64) {
	switch {
	case offset > 0:
		i := 0
		for i < len(s.queue) && s.queue[i].id < offset {
			i++
		}
		s.queue = s.queue[i:]
	case offset < 0:
		if keep := int(-offset); keep < len(s.queue) {
			s.queue = s.queue[len(s.queue)-keep:]
		}
	}
}

// pushRaw queues an update whose id is already set.
func (s *Server) push(id int64, raw json.RawMessage) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queued{id: id, raw: raw})
	s.notifyLocked()
	return id
}

// NextUpdateID reserves and returns the next update id.
func (s *Server) NextUpdateID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpdate
	s.nextUpdate++
	return id
}

// SkipUpdateIDs makes the next pushed update's id at least id.
func (s *Server) SkipUpdateIDs(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpdate = max(s.nextUpdate, id)
}

// PushUpdate queues u for getUpdates, assigning its update_id (which it returns).
func (s *Server) PushUpdate(u models.Update) int64 {
	u.ID = s.NextUpdateID()
	raw, err := json.Marshal(&u)
	if err != nil {
		panic(fmt.Sprintf("telegramtest: marshal update: %v", err))
	}
	return s.push(u.ID, raw)
}

// PushRaw queues raw (which must be valid JSON, but need not be a valid update) for
// getUpdates. If raw is an object its update_id is set to the assigned id, returned.
func (s *Server) PushRaw(raw []byte) int64 {
	if !json.Valid(raw) {
		panic("telegramtest: PushRaw needs valid JSON; use InjectFault for a broken body")
	}
	id := s.NextUpdateID()
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		obj["update_id"] = json.RawMessage(strconv.FormatInt(id, 10))
		raw, _ = json.Marshal(obj)
	}
	return s.push(id, raw)
}

// PushMessage queues a message update; a zero ID or Date is filled in. It returns the
// update id.
func (s *Server) PushMessage(m models.Message) int64 {
	if m.ID == 0 {
		m.ID = s.NextMessageID()
	}
	if m.Date == 0 {
		m.Date = int(s.now().Unix())
	}
	return s.PushUpdate(models.Update{Message: &m})
}

// PushText queues a text message from userID in the private chat chatID.
func (s *Server) PushText(userID, chatID int64, text string) int64 {
	return s.PushMessage(TextMessage(userID, chatID, models.ChatTypePrivate, text))
}

// PushGroupText queues a text message from userID in the supergroup chatID.
func (s *Server) PushGroupText(userID, chatID int64, text string) int64 {
	return s.PushMessage(TextMessage(userID, chatID, models.ChatTypeSupergroup, text))
}

// PushCallback queues a callback query (an inline button press) from userID on a message
// of the bot in chatID, and returns the update id.
func (s *Server) PushCallback(userID, chatID int64, data string) int64 {
	cq := CallbackQuery(userID, chatID, s.NextMessageID(), data)
	cq.Message.Message.From = &s.Bot
	cq.Message.Message.Date = int(s.now().Unix())
	return s.PushUpdate(models.Update{CallbackQuery: &cq})
}

// PushReaction queues a message_reaction update: userID reacts with emoji to message
// msgID of the private chat chatID. It returns the update id.
func (s *Server) PushReaction(userID, chatID int64, msgID int, emoji string) int64 {
	r := Reaction(userID, chatID, msgID, emoji)
	r.Date = int(s.now().Unix())
	return s.PushUpdate(models.Update{MessageReaction: &r})
}

// Pending returns the ids of the updates not yet confirmed.
func (s *Server) Pending() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, len(s.queue))
	for i, q := range s.queue {
		ids[i] = q.id
	}
	return ids
}

// Polls returns the getUpdates calls answered or in progress.
func (s *Server) Polls() []Poll { return snapshot(s, &s.polls) }

// MaxPollOffset is the highest offset any getUpdates call has carried: every update below
// it is confirmed.
func (s *Server) MaxPollOffset() int64 {
	var m int64
	for _, p := range s.Polls() {
		m = max(m, p.Offset)
	}
	return m
}

// WaitPollOffset waits until a getUpdates call carried an offset ≥ offset.
func (s *Server) WaitPollOffset(ctx context.Context, offset int64) error {
	return s.WaitFor(ctx, func() bool { return s.MaxPollOffset() >= offset })
}
