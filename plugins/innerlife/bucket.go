package innerlife

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/anima-bot/anima/plugins"
)

// Keys in the plugin's bucket. A user's records are keyed by chat and user (ids 8 bytes
// big-endian, so one user's records in one chat share a prefix): "C" chat user id →
// concern, "J" chat user at seq → entry, "L" chat user → the time of the latest journal
// entry (the 5-minute slot), "R" chat user at seq → reflection; "d" chat → the chat's
// last dream. Before the records were
// scoped, "c", "j" and "l" keyed them by chat alone; Load migrates those.
func chatKey(tag byte, chat int64) []byte {
	k := make([]byte, 9, 40)
	k[0] = tag
	binary.BigEndian.PutUint64(k[1:], uint64(chat))
	return k
}

func subjectKey(tag byte, s subject) []byte {
	return binary.BigEndian.AppendUint64(chatKey(tag, s.chat), uint64(s.user))
}

func concernKey(s subject, id string) []byte { return append(subjectKey('C', s), id...) }

func entryKey(s subject, at time.Time, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(subjectKey('J', s), uint64(at.UnixNano()))
	return binary.BigEndian.AppendUint64(k, seq)
}

// userOf is the user a scoped key (tag, chat, user, …) belongs to.
func userOf(k []byte) (int64, bool) {
	if len(k) < 17 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(k[9:17])), true
}

// scanJSON calls each with the key and the decoded value of every record under prefix; a
// value that does not decode as T stops the scan with an error that names what it is.
func scanJSON[T any](b plugins.Bucket, prefix []byte, what string, each func(k []byte, v *T)) error {
	return b.Scan(prefix, func(k, v []byte) error {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("decode %s: %w", what, err)
		}
		each(k, &x)
		return nil
	})
}

// Load implements plugins.Stateful. It first migrates records keyed by chat alone (written
// before records were scoped): a private chat's (a positive chat id, which is its user's
// id) become that user's; a group's, whose subject nobody recorded, are deleted, since
// they could be shown to no member without risking another member's and no /forget
// could find them.
func (p *Plugin) Load(b plugins.Bucket) error {
	if err := p.migrate(b); err != nil {
		return fmt.Errorf("innerlife: migrate: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := scanJSON(b, []byte{'C'}, "concern", func(_ []byte, c *Concern) {
		p.put(c)
	}); err != nil {
		return err
	}
	if err := scanJSON(b, []byte{'J'}, "journal entry", func(k []byte, e *Entry) {
		e.seq = seqOf(k)
		p.seq = max(p.seq, e.seq)
		if !e.Folded {
			p.addEntry(*e)
		}
	}); err != nil {
		return err
	}
	if err := scanJSON(b, []byte{'R'}, "reflection", func(k []byte, r *Reflection) {
		r.seq = seqOf(k)
		p.seq = max(p.seq, r.seq)
		p.addReflection(*r)
	}); err != nil {
		return err
	}
	return b.Scan([]byte{'d'}, func(k, v []byte) error {
		var t time.Time
		if err := json.Unmarshal(v, &t); err != nil || len(k) != 9 {
			return fmt.Errorf("decode dream time: %w", err)
		}
		p.dreamed[int64(binary.BigEndian.Uint64(k[1:]))] = t
		return nil
	})
}

// migrate rewrites the records keyed by chat alone ("c", "j", "l") under their subject's
// keys, or deletes them (a group's); see Load.
func (p *Plugin) migrate(b plugins.Bucket) error {
	type kv struct{ k, v []byte }
	var old []kv
	for _, tag := range []byte{'c', 'j', 'l'} {
		if err := b.Scan([]byte{tag}, func(k, v []byte) error {
			old = append(old, kv{slices.Clone(k), slices.Clone(v)})
			return nil
		}); err != nil {
			return err
		}
	}
	moved, dropped := 0, 0
	for _, r := range old {
		if err := b.Delete(r.k); err != nil {
			return err
		}
		if len(r.k) < 9 {
			continue
		}
		chat := int64(binary.BigEndian.Uint64(r.k[1:9]))
		if chat <= 0 {
			dropped++
			continue
		}
		s := subject{chat, chat}
		var key, val []byte
		switch r.k[0] {
		case 'c':
			var c Concern
			if err := json.Unmarshal(r.v, &c); err != nil {
				return fmt.Errorf("decode concern: %w", err)
			}
			c.User = chat
			key = concernKey(s, c.ID)
			val, _ = json.Marshal(c)
		case 'j':
			var e Entry
			if err := json.Unmarshal(r.v, &e); err != nil {
				return fmt.Errorf("decode journal entry: %w", err)
			}
			e.User = chat
			key = append(subjectKey('J', s), r.k[9:]...)
			val, _ = json.Marshal(e)
		case 'l':
			key, val = subjectKey('L', s), r.v
		}
		if err := b.Put(key, val); err != nil {
			return err
		}
		moved++
	}
	if len(old) > 0 {
		p.log.Info("inner life records scoped to their users", "moved", moved, "group_records_deleted", dropped)
	}
	return nil
}

// Forget implements plugins.Stateful: the user's concerns, journal, reflections and journal slots in
// every chat (their private chat and the groups they were spoken of in as the speaker),
// and their private chat's dream mark.
func (p *Plugin) Forget(b plugins.Bucket, user int64) error {
	var keys [][]byte
	for _, tag := range []byte{'C', 'J', 'L', 'R'} {
		if err := b.Scan([]byte{tag}, func(k, _ []byte) error {
			if u, ok := userOf(k); ok && u == user {
				keys = append(keys, slices.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
	}
	keys = append(keys, chatKey('d', user))
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	b.OnCommit(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for s, cs := range p.concerns {
			if s.user == user {
				for _, c := range slices.Clone(cs) {
					p.remove(c.ID)
				}
			}
		}
		forgetSubject(p.entries, user)
		forgetSubject(p.written, user)
		forgetSubject(p.reflections, user)
		forgetSubject(p.folding, user)
		forgetSubject(p.lastOpen, user)
		forgetSubject(p.claimed, user)
		delete(p.dreamed, user)
	})
	return nil
}

// forgetSubject deletes user's subjects (in every chat) from m.
func forgetSubject[V any](m map[subject]V, user int64) {
	maps.DeleteFunc(m, func(s subject, _ V) bool { return s.user == user })
}
