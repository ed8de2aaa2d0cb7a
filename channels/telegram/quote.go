package telegram

import (
	"strings"
	"sync"

	"github.com/anima-bot/anima/brain"
)

// A reaction update names only the message reacted to. So that the brain can say which
// of anima's messages a reaction is on, the channel remembers the start of the messages it
// sent lately: the last quoteKeep of all chats, each cut to quoteRunes, in memory (about
// 400 KB at most). A reaction to an older message, or to one sent before a restart, comes
// without its text.
const (
	quoteKeep  = 2048
	quoteRunes = 100
)

type sentQuote struct {
	chat int64
	id   int
	text string
}

// quotes is a ring of the latest sent messages' starts. It is safe for concurrent use.
type quotes struct {
	mu   sync.Mutex
	ring []sentQuote
	next int
}

func newQuotes() *quotes { return &quotes{ring: make([]sentQuote, 0, quoteKeep)} }

// put remembers the start of text (Markdown unless plain) as message id of chat; every
// part of a split message quotes the start of the whole.
func (q *quotes) put(chat int64, id int, text string, plain bool) {
	if !plain {
		text = ToPlain(text)
	}
	text = brain.TruncateRunes(strings.Join(strings.Fields(text), " "), quoteRunes)
	q.mu.Lock()
	defer q.mu.Unlock()
	e := sentQuote{chat: chat, id: id, text: text}
	if len(q.ring) < quoteKeep {
		q.ring = append(q.ring, e)
		return
	}
	q.ring[q.next] = e
	q.next = (q.next + 1) % quoteKeep
}

// get returns the start of message id of chat, "" when it is not remembered.
func (q *quotes) get(chat int64, id int) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range q.ring {
		if e.chat == chat && e.id == id {
			return e.text
		}
	}
	return ""
}

// forget drops the starts of chat's messages (the chat was forgotten); their slots are
// reused as if they had been pushed out.
func (q *quotes) forget(chat int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range q.ring {
		if q.ring[i].chat == chat {
			q.ring[i] = sentQuote{}
		}
	}
}

// ForgetChat drops what the channel remembers of the messages it sent to chat (their
// starts, quoted with reactions): the chat's data was deleted on request (/forget).
func (c *Channel) ForgetChat(chat int64) { c.quotes.forget(chat) }
