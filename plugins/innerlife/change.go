package innerlife

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/plugins"
)

// The plugin's own changes, carried by brain.PluginChange and applied by Apply in the
// turn's transaction.
type (
	openConcern  struct{ Concern Concern }
	touchConcern struct {
		ID        string
		Note      string
		CheckInAt time.Time // zero: unchanged
	}
	closeConcern struct{ ID string }
	// checkinAsked records that a run carried a due check-in; How is "proactive" (anima
	// wrote first) or "chat" (the user wrote first) or "dream".
	checkinAsked struct {
		ID  string
		How string
	}
	writeEntry struct{ Entry Entry }
	dreamt     struct{}
)

// change is the plugin's change c to the records of user in chat.
func change(chat, user int64, c any) brain.PluginChange {
	return brain.PluginChange{Plugin: Name, Chat: chat, User: user, Change: c}
}

// Apply implements plugins.Stateful. Every record is written under ch's chat and user,
// whatever the change itself says. The caps are checked again against what is committed
// (two runs of one chat, a dream's and a chat's, may each have been let through): an
// opening or an entry past its cap is dropped and logged, not an error that would roll the
// turn back.
func (p *Plugin) Apply(b plugins.Bucket, ch brain.PluginChange, at time.Time) error {
	s := subject{ch.Chat, ch.User}
	switch v := ch.Change.(type) {
	case openConcern:
		return p.applyOpen(b, s, v, at)
	case touchConcern:
		c, ok, err := getConcern(b, s, v.ID)
		if err != nil || !ok {
			return err // closed meanwhile: nothing to touch
		}
		c.Touched = at
		if v.Note != "" {
			c.Notes = append(c.Notes, v.Note)
			if len(c.Notes) > maxNotes {
				c.Notes = c.Notes[len(c.Notes)-maxNotes:]
			}
		}
		if !v.CheckInAt.IsZero() {
			c.CheckInAt, c.CheckInDone = v.CheckInAt, false
		}
		if err := putJSON(b, concernKey(s, c.ID), c); err != nil {
			return err
		}
		b.OnCommit(func() { p.mu.Lock(); p.put(&c); p.mu.Unlock() })
	case closeConcern:
		if _, ok, err := getConcern(b, s, v.ID); err != nil || !ok {
			return err // not this user's, or closed meanwhile
		}
		if err := b.Delete(concernKey(s, v.ID)); err != nil {
			return err
		}
		b.OnCommit(func() { p.mu.Lock(); p.remove(v.ID); p.mu.Unlock(); p.m.closed.Inc() })
	case checkinAsked:
		c, ok, err := getConcern(b, s, v.ID)
		if err != nil || !ok || c.CheckInDone {
			return err
		}
		c.CheckInDone, c.Asked = true, at
		if err := putJSON(b, concernKey(s, c.ID), c); err != nil {
			return err
		}
		b.OnCommit(func() { p.mu.Lock(); p.put(&c); p.mu.Unlock(); p.m.asked.WithLabelValues(v.How).Inc() })
	case writeEntry:
		return p.applyEntry(b, s, v)
	case foldJournal:
		return p.applyFold(b, s, v)
	case dreamt:
		if err := putJSON(b, chatKey('d', ch.Chat), at); err != nil {
			return err
		}
		b.OnCommit(func() { p.mu.Lock(); p.dreamed[ch.Chat] = at; p.mu.Unlock() })
	default:
		return fmt.Errorf("innerlife: unknown change %T", ch.Change)
	}
	return nil
}

// applyOpen opens v's concern for s, unless s has MaxOpenConcerns open in the chat.
func (p *Plugin) applyOpen(b plugins.Bucket, s subject, v openConcern, at time.Time) error {
	c := v.Concern
	c.Chat, c.User = s.chat, s.user
	p.mu.Lock()
	full := p.openCount(s, at) >= MaxOpenConcerns
	p.mu.Unlock()
	if full {
		p.log.Info("concern not opened: the user has the most open concerns in this chat", "chat", s.chat, "max", MaxOpenConcerns)
		return nil
	}
	if err := putJSON(b, concernKey(s, c.ID), c); err != nil {
		return err
	}
	b.OnCommit(func() {
		p.mu.Lock()
		p.put(&c)
		p.mu.Unlock()
		p.m.opened.Inc()
	})
	return nil
}

// applyEntry writes v's journal entry for s, unless the day's entries are written or
// another was written less than JournalEvery before.
func (p *Plugin) applyEntry(b plugins.Bucket, s subject, v writeEntry) error {
	e := v.Entry
	e.Chat, e.User = s.chat, s.user
	p.mu.Lock()
	full := p.writtenSince(s, e.At) >= p.cfg.JournalPerDay
	p.mu.Unlock()
	if full {
		p.log.Info("journal entry dropped: the day's entries are written", "chat", s.chat, "max", p.cfg.JournalPerDay)
		return nil
	}
	// The slot is taken here, in the turn's transaction: an entry less than
	// JournalEvery after the subject's last committed one (a dream's and a chat run's
	// at once, say) is dropped, not an error that would roll the turn back.
	mark := subjectKey('L', s)
	var last time.Time
	if data := b.Get(mark); data != nil {
		if err := json.Unmarshal(data, &last); err == nil && e.At.Sub(last).Abs() < JournalEvery {
			p.log.Info("journal entry dropped: another was written less than 5 minutes apart", "chat", e.Chat)
			return nil
		}
	}
	if e.At.After(last) {
		if err := putJSON(b, mark, e.At); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.seq++
	e.seq = p.seq
	p.mu.Unlock()
	if err := putJSON(b, e.key(), e); err != nil {
		return err
	}
	b.OnCommit(func() { p.mu.Lock(); p.addEntry(e); p.mu.Unlock(); p.m.entries.WithLabelValues(e.Kind).Inc() })
	return nil
}

func putJSON(b plugins.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("innerlife: encode: %w", err)
	}
	return b.Put(key, data)
}

func getConcern(b plugins.Bucket, s subject, id string) (Concern, bool, error) {
	var c Concern
	data := b.Get(concernKey(s, id))
	if data == nil {
		return c, false, nil
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, false, fmt.Errorf("innerlife: decode concern %s: %w", id, err)
	}
	return c, true, nil
}

// applyFold marks v's entries of s folded and writes its reflections, unless none of the
// entries is left to fold (forgotten or folded meanwhile).
func (p *Plugin) applyFold(b plugins.Bucket, s subject, v foldJournal) error {
	var folded []EntryRef
	for _, ref := range v.Entries {
		k := entryKey(s, ref.At, ref.Seq)
		data := b.Get(k)
		if data == nil {
			continue
		}
		var e Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("innerlife: decode journal entry: %w", err)
		}
		if e.Folded {
			continue
		}
		e.Folded = true
		if err := putJSON(b, k, e); err != nil {
			return err
		}
		folded = append(folded, ref)
	}
	if len(folded) == 0 {
		return nil
	}
	rs := slices.Clone(v.Reflections)
	for i := range rs {
		rs[i].Chat, rs[i].User = s.chat, s.user
		p.mu.Lock()
		p.seq++
		rs[i].seq = p.seq
		p.mu.Unlock()
		if err := putJSON(b, reflectionKey(s, rs[i].At, rs[i].seq), rs[i]); err != nil {
			return err
		}
	}
	b.OnCommit(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.entries[s] = slices.DeleteFunc(p.entries[s], func(e Entry) bool {
			return slices.ContainsFunc(folded, func(r EntryRef) bool { return r.Seq == e.seq && r.At.Equal(e.At) })
		})
		for _, r := range rs {
			p.addReflection(r)
		}
		p.m.folded.Add(float64(len(folded)))
	})
	return nil
}
