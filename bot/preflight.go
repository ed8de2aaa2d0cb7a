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
// store works at any path length). It changes nothing on disk. Each problem is a *config.KeyError; an address
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

// storeWritable reports why a store could not be opened at path: the file or its
// directory not writable, or the directory impossible to create.
func storeWritable(path string) error {
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s exists and is not a file", path)
		}
		if err := syscall.Access(path, 0o6); err != nil { // R_OK|W_OK
			return fmt.Errorf("%s cannot be read and written: %w", path, err)
		}
		return nil
	}
	dir := filepath.Dir(path)
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			if err := syscall.Access(dir, 0o3); err != nil { // W_OK|X_OK
				return fmt.Errorf("directory %s is not writable: %w", dir, err)
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("no directory of %s exists", path)
		}
		dir = parent
	}
}
