package telegram

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// source is the Signal.Source and Recorder source name of this channel.
const source = "telegram"

// identity is who the bot is, learned with getMe.
type identity struct {
	id       int64
	username string // without '@'
}

// classifier turns updates into signals. It is a pure function of its fields, so it can
// be fuzzed.
type classifier struct {
	me      identity
	allowed map[int64]bool
	public  bool
	// own reports whether anima sent message id of chat; nil: every message counts.
	own func(chat int64, id int) bool
	// quoted returns the start of anima's message id of chat ("" if unknown); nil: none.
	quoted func(chat int64, id int) string
}

// verdict is what became of one update.
type verdict struct {
	sig  brain.Signal
	ok   bool   // sig is to be recorded
	kind string // metrics label
	why  string // for the debug log: never message text
	// callbackID is set for a callback query, which is answered whatever the verdict.
	callbackID string
	// stranger is the sender of an update ignored because they are not allowed.
	stranger *stranger
}

// unauthorized is the verdict on an update from a sender who is not allowed.
func unauthorized(from *models.User, chat int64) verdict {
	return verdict{kind: kindUnauthorized, why: "sender not allowed",
		stranger: &stranger{user: from.ID, chat: chat, name: from.FirstName, username: from.Username}}
}

// classify decides what signal, if any, u becomes. now stands in for updates without a
// date (callback queries).
func (c classifier) classify(u *models.Update, now time.Time) verdict {
	switch {
	case u.Message != nil:
		return c.message(u.ID, u.Message)
	case u.CallbackQuery != nil:
		v := c.callback(u.ID, u.CallbackQuery, now)
		v.callbackID = u.CallbackQuery.ID
		return v
	case u.MessageReaction != nil:
		return c.reaction(u.ID, u.MessageReaction)
	case u.EditedMessage != nil:
		return verdict{kind: kindIgnored, why: "edited message"}
	case u.ChannelPost != nil, u.EditedChannelPost != nil:
		return verdict{kind: kindIgnored, why: "channel post"}
	case u.MyChatMember != nil:
		return verdict{kind: kindIgnored, why: "my_chat_member " + string(u.MyChatMember.NewChatMember.Type)}
	default:
		return verdict{kind: kindIgnored, why: "unsupported update type"}
	}
}

func (c classifier) authorized(user int64) bool {
	return c.public || c.allowed[user]
}

func (c classifier) message(updateID int64, m *models.Message) verdict {
	if m.From == nil || m.From.IsBot {
		return verdict{kind: kindIgnored, why: "no human sender"}
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	media := mediaOf(m)
	if strings.TrimSpace(text) == "" && media == nil {
		return verdict{kind: kindIgnored, why: "no text (sticker, service message)"}
	}
	switch m.Chat.Type {
	case models.ChatTypePrivate:
	case models.ChatTypeGroup, models.ChatTypeSupergroup:
		mentioned := false
		text, mentioned = c.stripMention(text, entities)
		replied := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == c.me.id && c.me.id != 0
		command := strings.HasPrefix(text, "/") && commandFor(text, c.me.username)
		if !mentioned && !replied && !command {
			return verdict{kind: kindIgnored, why: "group message not addressed to the bot"}
		}
	default:
		return verdict{kind: kindIgnored, why: "chat type " + string(m.Chat.Type)}
	}
	if !c.authorized(m.From.ID) {
		return unauthorized(m.From, m.Chat.ID)
	}
	sig := brain.Signal{
		Type:      brain.SignalUserMessage,
		Source:    source,
		Chat:      m.Chat.ID,
		User:      m.From.ID,
		UserName:  m.From.FirstName,
		Text:      strings.TrimSpace(text),
		At:        time.Unix(int64(m.Date), 0).UTC(),
		Ref:       strconv.FormatInt(updateID, 10),
		MessageID: m.ID,
		Media:     media,
	}
	if strings.HasPrefix(sig.Text, "/") {
		sig.Media = nil // a command in a caption is a command, as it always was
		if !commandFor(sig.Text, c.me.username) {
			return verdict{kind: kindIgnored, why: "command for another bot"}
		}
		sig.Type = brain.SignalCommand
		sig.Text = stripCommandSuffix(sig.Text)
		return verdict{sig: sig, ok: true, kind: kindCommand}
	}
	return verdict{sig: sig, ok: true, kind: kindMessage}
}

// commandFor reports whether the /command at the start of text is for this bot: it has
// no @suffix or the suffix is the bot's username.
func commandFor(text, username string) bool {
	word, _, _ := strings.Cut(text, " ")
	word, _, _ = strings.Cut(word, "\n")
	_, at, found := strings.Cut(word, "@")
	return !found || (username != "" && strings.EqualFold(at, username))
}

// stripCommandSuffix turns "/help@anima_bot args" into "/help args".
func stripCommandSuffix(text string) string {
	end := strings.IndexAny(text, " \n")
	if end < 0 {
		end = len(text)
	}
	word := text[:end]
	if i := strings.IndexByte(word, '@'); i >= 0 {
		word = word[:i]
	}
	return word + text[end:]
}

// stripMention removes mentions of the bot from text and reports whether there was one.
// Entity offsets are in UTF-16 units and come from the network: they are bounds-checked.
func (c classifier) stripMention(text string, entities []models.MessageEntity) (string, bool) {
	if c.me.username == "" && c.me.id == 0 {
		return text, false
	}
	u := utf16.Encode([]rune(text))
	keep := make([]bool, len(u))
	for i := range keep {
		keep[i] = true
	}
	found := false
	for _, e := range entities {
		if e.Offset < 0 || e.Length <= 0 || e.Offset > len(u) || e.Length > len(u)-e.Offset {
			continue
		}
		mine := false
		switch e.Type {
		case models.MessageEntityTypeMention:
			name := string(utf16.Decode(u[e.Offset : e.Offset+e.Length]))
			mine = c.me.username != "" && strings.EqualFold(name, "@"+c.me.username)
		case models.MessageEntityTypeTextMention:
			mine = e.User != nil && e.User.ID == c.me.id && c.me.id != 0
		}
		if mine {
			found = true
			for i := e.Offset; i < e.Offset+e.Length; i++ {
				keep[i] = false
			}
		}
	}
	if !found {
		return text, false
	}
	out := make([]uint16, 0, len(u))
	for i, ch := range u {
		if keep[i] {
			out = append(out, ch)
		}
	}
	return strings.Join(strings.Fields(string(utf16.Decode(out))), " "), true
}

func (c classifier) callback(updateID int64, q *models.CallbackQuery, now time.Time) verdict {
	if !strings.HasPrefix(q.Data, "/") {
		return verdict{kind: kindIgnored, why: "callback data is not a command"}
	}
	var (
		chat  int64
		msgID int
	)
	switch {
	case q.Message.Message != nil:
		chat, msgID = q.Message.Message.Chat.ID, q.Message.Message.ID
	case q.Message.InaccessibleMessage != nil:
		chat, msgID = q.Message.InaccessibleMessage.Chat.ID, q.Message.InaccessibleMessage.MessageID
	}
	if chat == 0 {
		return verdict{kind: kindIgnored, why: "callback without a chat"}
	}
	if !c.authorized(q.From.ID) {
		return unauthorized(&q.From, chat)
	}
	return verdict{ok: true, kind: kindCommand, sig: brain.Signal{
		Type:      brain.SignalCommand,
		Source:    source,
		Chat:      chat,
		User:      q.From.ID,
		UserName:  q.From.FirstName,
		Text:      q.Data,
		At:        now.UTC(),
		Ref:       strconv.FormatInt(updateID, 10),
		MessageID: msgID,
	}}
}

func (c classifier) reaction(updateID int64, r *models.MessageReactionUpdated) verdict {
	if r.User == nil {
		return verdict{kind: kindIgnored, why: "anonymous reaction"}
	}
	if r.Chat.Type != models.ChatTypePrivate {
		return verdict{kind: kindIgnored, why: "reaction outside a private chat"}
	}
	var emojis []string
	for _, rt := range r.NewReaction {
		if rt.ReactionTypeEmoji != nil && rt.ReactionTypeEmoji.Emoji != "" {
			emojis = append(emojis, rt.ReactionTypeEmoji.Emoji)
		}
	}
	if len(emojis) == 0 {
		return verdict{kind: kindIgnored, why: "reaction removed or not an emoji"}
	}
	if !c.authorized(r.User.ID) {
		return unauthorized(r.User, r.Chat.ID)
	}
	if c.own != nil && !c.own(r.Chat.ID, r.MessageID) {
		return verdict{kind: kindReactionOther, why: "reaction to a message anima did not send"}
	}
	var quote string
	if c.quoted != nil {
		quote = c.quoted(r.Chat.ID, r.MessageID)
	}
	return verdict{ok: true, kind: kindReaction, sig: brain.Signal{
		Type:      brain.SignalReaction,
		Detail:    quote,
		Source:    source,
		Chat:      r.Chat.ID,
		User:      r.User.ID,
		UserName:  r.User.FirstName,
		Text:      strings.Join(emojis, " "),
		At:        time.Unix(int64(r.Date), 0).UTC(),
		Ref:       strconv.FormatInt(updateID, 10),
		MessageID: r.MessageID,
	}}
}
