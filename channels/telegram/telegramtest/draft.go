package telegramtest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Draft is a sendMessageDraft call the fake accepted: a preview of a message being written.
type Draft struct {
	ChatID    int64
	DraftID   int64
	Text      string // as sent (with HTML tags for parse_mode HTML); "" for the placeholder
	Visible   string // what the user sees: tags removed and entities decoded
	ParseMode string
	At        time.Time
}

// sendMessageDraft checks a draft as Telegram does (Bot API 9.3): a private chat, a
// non-zero integer draft_id, a text of at most 4096 UTF-16 units after entity parsing
// (empty shows a "thinking" placeholder), and records it.
func (s *Server) sendMessageDraft(p map[string]string, at time.Time) (any, *apiError) {
	chat, aerr := chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	if chat <= 0 {
		return nil, badRequest("message drafts can be sent only to private chats")
	}
	id, err := strconv.ParseInt(strings.TrimSpace(p["draft_id"]), 10, 64)
	if err != nil || id == 0 {
		return nil, badRequest("invalid draft_id: must be a non-zero integer")
	}
	text, mode, visible, aerr := messageText(p)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	s.drafts = append(s.drafts, Draft{ChatID: chat, DraftID: id, Text: text, Visible: visible, ParseMode: mode, At: at})
	s.notifyLocked()
	s.mu.Unlock()
	return true, nil
}

// Drafts returns the drafts accepted so far, in the order received.
func (s *Server) Drafts() []Draft {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Draft, len(s.drafts))
	copy(out, s.drafts)
	return out
}

// DraftsTo returns the drafts shown in chat.
func (s *Server) DraftsTo(chat int64) []Draft {
	return slices.DeleteFunc(s.Drafts(), func(d Draft) bool { return d.ChatID != chat })
}

// WaitDrafts waits until at least n drafts were accepted and returns them all.
func (s *Server) WaitDrafts(ctx context.Context, n int) ([]Draft, error) {
	var out []Draft
	err := s.WaitFor(ctx, func() bool {
		out = s.Drafts()
		return len(out) >= n
	})
	return out, err
}
