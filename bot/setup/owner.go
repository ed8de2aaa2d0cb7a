package setup

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/anima-bot/anima/brain"
)

// codeDigits is the length of the one-time code: a guess is right once in a million, and
// a sender gets maxWrongCodes guesses in one run of init.
const codeDigits = 6

// maxWrongCodes is how many wrong codes one sender may send before the rest of their
// messages are ignored unread (a typo is allowed for; guessing is not).
const maxWrongCodes = 3

// maxIgnoredShown is how many ignored messages are shown one line each; the rest are
// only counted, so a flood of messages cannot flood the terminal.
const maxIgnoredShown = 5

// newCode returns a random decimal code of codeDigits digits from crypto/rand.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("draw the one-time code: %w", err)
	}
	return fmt.Sprintf("%0*d", codeDigits, n.Int64()), nil
}

// gate lets through the one message that carries the code. It prints what it takes and,
// up to maxIgnoredShown, what it ignores, with everything that came from Telegram
// escaped (printable).
type gate struct {
	code, bot string
	out       io.Writer
	ignored   int
	wrong     map[int64]int // wrong codes per sender
}

// take returns the sender of m when m carries the code, else nil (m ignored).
func (g *gate) take(m *models.Message) *models.User {
	u := m.From
	arg, isCode := codeArg(m.Text, g.bot)
	if g.wrong[u.ID] < maxWrongCodes && isCode && subtle.ConstantTimeCompare([]byte(arg), []byte(g.code)) == 1 {
		fmt.Fprintf(g.out, "  ✓ The code came from user id %d (%s): writing it to telegram.allowed_users.\n", u.ID, name(u))
		if g.ignored > 0 {
			fmt.Fprintf(g.out, "  (%s.)\n", g.ignoredCount())
		}
		return u
	}
	why := "no code"
	switch {
	case g.wrong[u.ID] >= maxWrongCodes:
		why = fmt.Sprintf("%d wrong codes from them already", maxWrongCodes)
	case isCode:
		why = "wrong code"
		if g.wrong == nil {
			g.wrong = map[int64]int{}
		}
		g.wrong[u.ID]++
	}
	g.ignored++
	if g.ignored <= maxIgnoredShown {
		fmt.Fprintf(g.out, "  Ignored a message from user id %d (%s): %s.\n", u.ID, name(u), why)
		if g.ignored == maxIgnoredShown {
			fmt.Fprintln(g.out, "  Further messages without the code are counted, not shown.")
		}
	}
	return nil
}

// ignoredCount says how many messages were ignored.
func (g *gate) ignoredCount() string {
	if g.ignored == 1 {
		return "1 message without the code was ignored"
	}
	return fmt.Sprintf("%d messages without the code were ignored", g.ignored)
}

// codeArg returns the code a message text offers, and whether it offers one: "/start
// CODE" (what the t.me deep link sends), "/start@bot CODE", or the bare digits.
func codeArg(text, bot string) (string, bool) {
	f := strings.Fields(text)
	switch {
	case len(f) == 2 && (f[0] == "/start" || strings.EqualFold(f[0], "/start@"+bot)):
		return f[1], true
	case len(f) == 1 && len(f[0]) == codeDigits && strings.Trim(f[0], "0123456789") == "":
		return f[0], true
	}
	return "", false
}

// name is how a sender is shown: first and last name, and @username, escaped.
func name(u *models.User) string {
	n := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if u.Username != "" {
		n += " @" + u.Username
	}
	return brain.Printable(n)
}
