package pluginstest

import "github.com/anima-bot/anima/plugins"

var _ plugins.Store = Store(nil)

// Store is an in-memory plugins.Store: a Bucket per plugin, made by its first Update.
// Its transactions always commit. Make one with Store{}.
type Store map[string]Bucket

// View runs fn with plugin's bucket (nil, which reads as empty, before any Update).
func (s Store) View(plugin string, fn func(plugins.Bucket) error) error { return fn(s[plugin]) }

// Update runs fn with plugin's bucket, making it if missing.
func (s Store) Update(plugin string, fn func(plugins.Bucket) error) error {
	if s[plugin] == nil {
		s[plugin] = Bucket{}
	}
	return fn(s[plugin])
}

// Erase runs fn with plugin's bucket and reports whether fn deleted a key that was there.
func (s Store) Erase(plugin string, fn func(plugins.Bucket) error) (erased bool, err error) {
	b := &erasing{Bucket: s[plugin]}
	err = fn(b)
	return b.deleted > 0, err
}

// erasing is a Bucket that counts the keys deleted from it.
type erasing struct {
	Bucket
	deleted int
}

func (b *erasing) Delete(k []byte) error {
	if b.Get(k) != nil {
		b.deleted++
	}
	return b.Bucket.Delete(k)
}
