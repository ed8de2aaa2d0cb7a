package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/anima-bot/anima/brain"
)

// ErrEmptyFact is returned by Remember when the attribute or the value is empty after
// normalisation.
var ErrEmptyFact = errors.New("attribute and value must not be empty")

// NormalizeAttribute turns an attribute name into the stored key form: lower case,
// letters and digits joined by single underscores, at most 64 runes ("Favourite Color" →
// "favourite_color"). It returns "" when nothing usable is left.
func NormalizeAttribute(attr string) string {
	words := strings.FieldsFunc(strings.ToLower(attr), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return strings.TrimRight(brain.TruncateRunes(strings.Join(words, "_"), maxAttributeRunes), "_")
}

// normalizeValue trims value, folds its whitespace runs (newlines included) to single
// spaces and caps it at 500 runes.
func normalizeValue(value string) string {
	return brain.TruncateRunes(strings.Join(strings.Fields(value), " "), maxValueRunes)
}

// factPrefix is the key prefix of the facts about user told in chat.
func factPrefix(chat, user int64) []byte { return brain.Key(chat, brain.ID64(user)) }

// Remember stores value as the user's attribute in chat, replacing an earlier value.
// Facts are scoped: those told in a private chat (chat = user) are the user's private
// facts, those told in a group are that group's facts about the member. The attribute
// is normalised (see NormalizeAttribute) and the value capped at 500 runes. It returns
// ErrEmptyFact, ErrTooManyFacts or the store's error.
func (m *Memory) Remember(chat, user int64, attribute, value string, at time.Time) error {
	return m.st.Update(func(tx Tx) error { return m.RememberTx(tx, chat, user, attribute, value, at) })
}

// RememberTx is Remember inside the caller's transaction (storage.Commit.Also, so the fact
// lands with the turn that learned it). ErrEmptyFact and ErrTooManyFacts come back before
// anything is written.
func (m *Memory) RememberTx(tx Tx, chat, user int64, attribute, value string, at time.Time) error {
	attr, val := NormalizeAttribute(attribute), normalizeValue(value)
	if attr == "" || val == "" {
		return ErrEmptyFact
	}
	err := rememberTx(tx, chat, user, attr, val, at)
	if err != nil {
		return fmt.Errorf("remember %s of user %d in chat %d: %w", attr, user, chat, err)
	}
	return nil
}

func rememberTx(tx Tx, chat, user int64, attr, val string, at time.Time) error {
	old, err := tx.GetRaw(brain.BucketFacts, brain.FactKey(chat, user, attr))
	if err != nil {
		return err
	}
	if old == nil {
		n := 0
		if err := tx.Scan(brain.BucketFacts, factPrefix(chat, user), func(_, _ []byte) error {
			n++
			return nil
		}); err != nil {
			return err
		}
		if n >= maxFactsPerUser {
			return ErrTooManyFacts
		}
	}
	return tx.Put(brain.BucketFacts, brain.FactKey(chat, user, attr), brain.Fact{Attribute: attr, Value: val, At: at})
}

// Facts returns what user told anima in chat, sorted by attribute: in a private chat
// the user's private facts, in a group what the member said there.
func (m *Memory) Facts(chat, user int64) ([]brain.Fact, error) {
	facts, err := viewed(m.st, func(tx Tx) ([]brain.Fact, error) { return loadFacts(tx, chat, user) })
	if err != nil {
		return nil, fmt.Errorf("read facts of user %d in chat %d: %w", user, chat, err)
	}
	return facts, nil
}

func loadFacts(tx Tx, chat, user int64) ([]brain.Fact, error) {
	var facts []brain.Fact
	if user == 0 {
		return nil, nil
	}
	err := tx.Scan(brain.BucketFacts, factPrefix(chat, user), func(_, v []byte) error {
		var f brain.Fact
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("decode fact: %w", err)
		}
		facts = append(facts, f)
		return nil
	})
	return facts, err
}

func sortFactsByRecency(fs []brain.Fact) {
	slices.SortStableFunc(fs, func(a, b brain.Fact) int { return b.At.Compare(a.At) })
}

func sortFactsByAttribute(fs []brain.Fact) {
	slices.SortFunc(fs, func(a, b brain.Fact) int { return strings.Compare(a.Attribute, b.Attribute) })
}
