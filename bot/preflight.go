package bot

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/anima-bot/anima/bot/config"
)

// Preflight reports what would stop `anima run` (or chat, with console set) from starting
// with cfg beyond what the configuration's validation judges: a store path that cannot
// be created or written, a listener that cannot be bound (the control socket beside the
// store works at any path length). It leaves nothing on disk. Each problem is a *config.KeyError; an address
// already in use is not one (a running anima holds it) but comes back in notes.
func Preflight(cfg config.Config, console bool) (notes []string, err error) {
	var p []error
	if e := storeWritable(cfg.Storage.Path); e != nil {
		p = append(p, &config.KeyError{Key: "storage.path", Msg: e.Error()})
	}
	listeners := []struct{ key, addr string }{{"metrics.listen", cfg.Metrics.Listen}}
	if !console && cfg.Telegram.Mode == config.ModeWebhook {
		listeners = append(listeners, struct{ key, addr string }{"telegram.webhook.listen", cfg.Telegram.Webhook.Listen})
	}
	for _, l := range listeners {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		switch {
		case err == nil:
			_ = ln.Close()
		case errors.Is(err, syscall.EADDRINUSE):
			notes = append(notes, fmt.Sprintf("%s: %s is in use now (by a running anima?)", l.key, l.addr))
		default:
			p = append(p, &config.KeyError{Key: l.key, Msg: fmt.Sprintf("cannot listen on %s: %s", l.addr, err)})
		}
	}
	return notes, errors.Join(p...)
}

// storeWritable reports why a store could not be opened at path: the file not readable
// and writable, or its directory impossible to create or write. It tries what the store
// will do — opens the file for writing, or creates a file in its directory, or the first
// missing directory of its path — and removes what it created: permission bits alone do
// not tell, root passes every access check, and a read-only or pseudo file system (such
// as /sys) refuses only the act.
func storeWritable(path string) error {
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s exists and is not a file", path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("%s cannot be read and written: %w", path, err)
		}
		return f.Close()
	}
	dir, missing := filepath.Dir(path), ""
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("no directory of %s exists", path)
		}
		dir, missing = parent, dir
	}
	if missing != "" {
		if err := os.Mkdir(missing, 0o700); err != nil {
			return fmt.Errorf("directory %s cannot be created: %w", missing, err)
		}
		return os.Remove(missing)
	}
	f, err := os.CreateTemp(dir, ".anima-check-*")
	if err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
