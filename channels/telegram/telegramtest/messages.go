package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
)

// MaxMessageLength is Telegram's limit on a message's text, in UTF-16 code units after
// entity parsing.
const MaxMessageLength = 4096

// Message is a message the bot sent with sendMessage.
type Message struct {
	ID          int
	ChatID      int64
	Text        string // as sent (with HTML tags for parse_mode HTML)
	Visible     string // what the user sees: tags removed and entities decoded
	ParseMode   string
	ReplyTo     int             // reply_parameters.message_id, 0 if none
	ReplyMarkup json.RawMessage // raw reply_markup, nil if none
	LinkPreview json.RawMessage // raw link_preview_options, nil if none
	At          time.Time       // when the fake received it
}

// ChatAction is a sendChatAction call.
type ChatAction struct {
	ChatID int64
	Action string
	At     time.Time
}

// CallbackAnswer is an answerCallbackQuery call.
type CallbackAnswer struct {
	ID   string
	Text string
	At   time.Time
}

// messageText reads a message's text and parse mode and returns the text as a user sees
// it (entities parsed), refusing what Telegram refuses: entities it cannot parse, and
// more than 4096 UTF-16 units.
func messageText(p map[string]string) (text, mode, visible string, aerr *apiError) {
	text, mode = p["text"], p["parse_mode"]
	visible = text
	if strings.EqualFold(mode, "HTML") {
		v, err := ParseHTML(text)
		if err != nil {
			return "", "", "", badRequest("can't parse entities: %s", err.Error())
		}
		visible = v
	}
	if UTF16Len(visible) > MaxMessageLength {
		return "", "", "", badRequest("message is too long")
	}
	return text, mode, visible, nil
}

func (s *Server) sendMessage(p map[string]string, at time.Time) (any, *apiError) {
	chat, aerr := chatID(p)
	if aerr != nil {
		return nil, aerr
	}
	text, mode, visible, aerr := messageText(p)
	if aerr != nil {
		return nil, aerr
	}
	if strings.TrimSpace(visible) == "" {
		return nil, badRequest("message text is empty")
	}
	m := Message{ChatID: chat, Text: text, Visible: visible, ParseMode: mode, At: at}
	if v := p["link_preview_options"]; v != "" {
		m.LinkPreview = json.RawMessage(v)
	}
	if m.ReplyMarkup, m.ReplyTo, aerr = replyFields(p); aerr != nil {
		return nil, aerr
	}
	s.keep(func(id int) { m.ID = id; s.sent = append(s.sent, m) })
	out := s.sentMessage(chat, m.ID)
	out.Text = visible
	return out, nil
}

// sentMessage is the Message the Bot API answers a send with: id, the bot as its sender,
// the date on the server's clock, and the chat (a negative id is a supergroup).
func (s *Server) sentMessage(chat int64, id int) models.Message {
	chatType := models.ChatTypePrivate
	if chat < 0 {
		chatType = models.ChatTypeSupergroup
	}
	return models.Message{ID: id, From: &s.Bot, Date: int(s.now().Unix()), Chat: models.Chat{ID: chat, Type: chatType}}
}

// keep gives a sent message the next message id, records it with add under the lock, and
// wakes the waiters.
func (s *Server) keep(add func(id int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg++
	add(s.nextMsg)
	s.notifyLocked()
}

// NextMessageID reserves and returns the next message id (shared with sent messages).
func (s *Server) NextMessageID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg++
	return s.nextMsg
}

// snapshot is a copy of a list that s.mu guards.
func snapshot[T any](s *Server, list *[]T) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(*list)
}

// Sent returns the messages sent successfully, in the order received.
func (s *Server) Sent() []Message { return snapshot(s, &s.sent) }

// SentTo returns the messages sent to chat.
func (s *Server) SentTo(chat int64) []Message {
	return slices.DeleteFunc(s.Sent(), func(m Message) bool { return m.ChatID != chat })
}

// Actions returns the sendChatAction calls.
func (s *Server) Actions() []ChatAction { return snapshot(s, &s.actions) }

// CallbackAnswers returns the answerCallbackQuery calls.
func (s *Server) CallbackAnswers() []CallbackAnswer { return snapshot(s, &s.answers) }

// WaitSent waits until at least n messages were sent and returns them all.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Message, error) {
	var out []Message
	err := s.WaitFor(ctx, func() bool {
		out = s.Sent()
		return len(out) >= n
	})
	if err != nil {
		return out, fmt.Errorf("%d of %d messages sent: %w", len(out), n, err)
	}
	return out, nil
}

// sendChatAction records a chat action ("typing" …).
func (s *Server) sendChatAction(p map[string]string, at time.Time) (any, *apiError) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.actions = append(s.actions, ChatAction{ChatID: chat, Action: p["action"], At: at})
	s.mu.Unlock()
	return true, nil
}

// answerCallbackQuery records the answer to an inline button press.
func (s *Server) answerCallbackQuery(p map[string]string, at time.Time) (any, *apiError) {
	s.mu.Lock()
	s.answers = append(s.answers, CallbackAnswer{ID: p["callback_query_id"], Text: p["text"], At: at})
	s.mu.Unlock()
	return true, nil
}

// replyFields are p's reply_markup (nil without it) and the message id of its
// reply_parameters (0 without them), as a send reads them.
func replyFields(p map[string]string) (json.RawMessage, int, *apiError) {
	var markup json.RawMessage
	if v := p["reply_markup"]; v != "" {
		if !json.Valid([]byte(v)) {
			return nil, 0, badRequest("can't parse reply keyboard markup JSON object")
		}
		markup = json.RawMessage(v)
	}
	v := p["reply_parameters"]
	if v == "" {
		return markup, 0, nil
	}
	var rp struct {
		MessageID int `json:"message_id"`
	}
	if err := json.Unmarshal([]byte(v), &rp); err != nil {
		return nil, 0, badRequest("can't parse reply parameters JSON object")
	}
	return markup, rp.MessageID, nil
}
