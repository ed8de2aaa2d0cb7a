package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"
)

// SecretHeader is the header Telegram puts the webhook secret token in.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// User returns a user with a first name derived from id.
func User(id int64) models.User {
	return models.User{ID: id, FirstName: "User" + strconv.FormatInt(id, 10), LanguageCode: "en"}
}

// TextMessage builds a text message from userID in chat chatID of type chatType, with
// the entities Telegram would attach (@mentions, a leading /command). ID and Date are
// left zero (PushMessage fills them in).
func TextMessage(userID, chatID int64, chatType models.ChatType, text string) models.Message {
	from := User(userID)
	chat := models.Chat{ID: chatID, Type: chatType}
	if chatType == models.ChatTypePrivate {
		chat.FirstName = from.FirstName
	} else {
		chat.Title = "Group " + strconv.FormatInt(chatID, 10)
	}
	return models.Message{From: &from, Chat: chat, Text: text, Entities: Entities(text)}
}

// CallbackQuery builds a callback query from userID pressing a button with data on
// message msgID in the private chat chatID.
func CallbackQuery(userID, chatID int64, msgID int, data string) models.CallbackQuery {
	from := User(userID)
	return models.CallbackQuery{
		ID:           "cq" + strconv.FormatInt(time.Now().UnixNano(), 36),
		From:         from,
		ChatInstance: "ci" + strconv.FormatInt(chatID, 10),
		Data:         data,
		Message: models.MaybeInaccessibleMessage{
			Type: models.MaybeInaccessibleMessageTypeMessage,
			Message: &models.Message{
				ID:   msgID,
				Date: int(time.Now().Unix()),
				Chat: models.Chat{ID: chatID, Type: models.ChatTypePrivate},
				Text: "buttons",
			},
		},
	}
}

var (
	mentionRe = regexp.MustCompile(`@[A-Za-z0-9_]{3,32}`)
	commandRe = regexp.MustCompile(`^/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{3,32})?`)
)

// Entities returns the mention and bot_command entities Telegram derives from text, with
// offsets and lengths in UTF-16 code units.
func Entities(text string) []models.MessageEntity {
	var out []models.MessageEntity
	if loc := commandRe.FindStringIndex(text); loc != nil {
		out = append(out, models.MessageEntity{Type: models.MessageEntityTypeBotCommand, Offset: 0, Length: UTF16Len(text[:loc[1]])})
	}
	for _, loc := range mentionRe.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && text[loc[0]-1] != ' ' && text[loc[0]-1] != '\n' {
			continue // part of a word or of a /command@bot
		}
		out = append(out, models.MessageEntity{
			Type:   models.MessageEntityTypeMention,
			Offset: UTF16Len(text[:loc[0]]),
			Length: UTF16Len(text[loc[0]:loc[1]]),
		})
	}
	return out
}

// PostWebhook posts update (a models.Update, *models.Update, []byte or string of JSON)
// to url as Telegram's webhook delivery does, with secret in the secret-token header
// unless secret is empty. It returns the HTTP status.
func PostWebhook(ctx context.Context, url, secret string, update any) (int, error) {
	var body []byte
	switch u := update.(type) {
	case []byte:
		body = u
	case string:
		body = []byte(u)
	case models.Update:
		b, err := json.Marshal(&u)
		if err != nil {
			return 0, fmt.Errorf("marshal update: %w", err)
		}
		body = b
	case *models.Update:
		b, err := json.Marshal(u)
		if err != nil {
			return 0, fmt.Errorf("marshal update: %w", err)
		}
		body = b
	default:
		return 0, fmt.Errorf("PostWebhook: unsupported update type %T", update)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set(SecretHeader, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// Reaction builds a message_reaction update: userID sets the emoji reaction on message
// msgID of the private chat chatID (old_reaction empty, date now). Its fields are the
// Bot API's MessageReactionUpdated (chat, message_id, user, date, old_reaction,
// new_reaction).
func Reaction(userID, chatID int64, msgID int, emoji string) models.MessageReactionUpdated {
	from := User(userID)
	return models.MessageReactionUpdated{
		Chat:        models.Chat{ID: chatID, Type: models.ChatTypePrivate, FirstName: from.FirstName},
		MessageID:   msgID,
		User:        &from,
		Date:        int(time.Now().Unix()),
		OldReaction: []models.ReactionType{},
		NewReaction: []models.ReactionType{{Type: models.ReactionTypeTypeEmoji,
			ReactionTypeEmoji: &models.ReactionTypeEmoji{Type: models.ReactionTypeTypeEmoji, Emoji: emoji}}},
	}
}
