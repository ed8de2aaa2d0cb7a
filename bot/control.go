package bot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anima-bot/anima/channels/listener"
	"github.com/anima-bot/anima/storage"
)

// ControlSocket is the path of the running service's control socket for a store: a unix
// socket beside the store file, mode 0600, so only the owner can ask for a backup.
func ControlSocket(storePath string) string { return storePath + ".sock" }

// Limits of the control socket. A client must send its request line within
// controlReadTimeout, and take each chunk of the answer within controlWriteTimeout: a
// backup of any size streams as long as the client keeps reading, but one that stops
// reading does not hold a connection (and the backup's snapshot file) for ever; the store
// itself it never holds (storage.Store.WriteSizedTo streams from a snapshot). Beyond
// controlMaxConns connections, new ones wait to be accepted.
const (
	controlReadTimeout  = 5 * time.Second
	controlWriteTimeout = 30 * time.Second
	controlMaxConns     = 8
)

// controlServer answers requests from `anima backup` on the control socket.
type controlServer struct {
	ln    net.Listener
	path  string
	store *storage.Store
	log   *slog.Logger
	dead  *deadLetters // answers `anima dead` (dead.go); nil: not served

	// Limits (the control* constants; tests shorten them).
	readTimeout, writeTimeout time.Duration
	maxConns                  int
}

func newControlServer(store *storage.Store, log *slog.Logger) (*controlServer, error) {
	path := ControlSocket(store.Path())
	// A socket left by a crashed run is stale: nobody answers on it.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	c, err := dialControl(ctx, path)
	cancel()
	if err == nil {
		_ = c.Close()
		return nil, fmt.Errorf("control socket %s is answered by another process", path)
	}
	_ = os.Remove(path)
	ln, err := listenPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return &controlServer{
		ln: ln, path: path, store: store, log: log.With("component", "control"),
		readTimeout: controlReadTimeout, writeTimeout: controlWriteTimeout, maxConns: controlMaxConns,
	}, nil
}

// listenPrivate listens on a unix socket at path that only the owner can use from the
// moment it exists: the socket is made in a fresh 0700 directory beside path, set to
// 0600 there, and only then renamed into place.
func listenPrivate(path string) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".anima-sock-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	addr, release, err := socketAddr(tmp)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", addr)
	release()
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // it is unlinked by path at stop
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = ln.Close()
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// maxSocketPath is the longest path a unix socket address holds (sun_path is 108 bytes
// on Linux, 104 on the BSDs, with a terminating NUL).
const maxSocketPath = 103

// socketAddr returns the address to bind or connect to for a unix socket at path. A
// path too long for a socket address (a store 83 characters or more down the tree)
// is reached through the directory holding it, opened, as /proc/self/fd/N/name:
// the socket stays at path, so only its owner reaches it, and `anima backup` finds it
// there. release closes the directory once the socket is bound or connected.
func socketAddr(path string) (addr string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, fmt.Errorf("socket path of %d bytes: open its directory: %w", len(path), err)
	}
	addr = fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(addr) > maxSocketPath {
		_ = dir.Close()
		return "", nil, fmt.Errorf("socket path of %d bytes: its name %q is too long for a unix socket", len(path), filepath.Base(path))
	}
	return addr, func() { _ = dir.Close() }, nil
}

// dialControl connects to the control socket at path, whatever its length.
func dialControl(ctx context.Context, path string) (net.Conn, error) {
	addr, release, err := socketAddr(path)
	if err != nil {
		return nil, err
	}
	defer release()
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}

// Run answers requests until ctx ends; it then closes the connections still open (a
// backup client that stopped reading must not hold the store open) and waits for them.
func (c *controlServer) Run(ctx context.Context) error {
	ln := listener.Limit(c.ln, c.maxConns)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		_ = ln.Close()
		mu.Lock()
		for conn := range conns {
			_ = conn.Close()
		}
		mu.Unlock()
	}()
	defer func() {
		_ = ln.Close()
		<-stopped
		wg.Wait()
		_ = os.Remove(c.path)
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("control socket: %w", err)
		}
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			_ = conn.Close()
			return nil
		}
		conns[conn] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.serve(conn)
			mu.Lock()
			delete(conns, conn)
			mu.Unlock()
		}()
	}
}

func (c *controlServer) serve(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(c.readTimeout))
	line, err := bufio.NewReader(io.LimitReader(conn, 256)).ReadString('\n')
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	w := &deadlineWriter{conn: conn, timeout: c.writeTimeout}
	if req, ok := strings.CutPrefix(strings.TrimSpace(line), "dead "); ok {
		c.serveDead(w, req)
		return
	}
	switch strings.TrimSpace(line) {
	case "backup":
		n, err := c.store.WriteSizedTo(w)
		if err != nil {
			c.log.Error("backup over control socket", "err", err)
			return
		}
		c.log.Info("backup streamed", "bytes", n)
	default:
		_, _ = fmt.Fprintf(w, "unknown request\n")
	}
}

// deadlineWriter gives each Write on conn its own deadline, so a long stream goes on as
// long as the reader keeps up, and a reader that stops is cut off after timeout.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	if err := w.conn.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, err
	}
	return w.conn.Write(p)
}

// Backup writes a consistent copy of the store at storePath to out. If the service is
// running it streams the copy over the control socket (the service holds the file lock);
// otherwise it opens the store itself. The copy is written to a temporary file, checked
// to open as a store, and renamed into place.
func Backup(ctx context.Context, storePath, out string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp*")
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := backupTo(ctx, storePath, tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	check, err := storage.Open(tmp.Name(), storage.Options{ReadOnly: true})
	if err != nil {
		return n, fmt.Errorf("backup: the copy does not open: %w", err)
	}
	if err := check.Ping(); err != nil {
		_ = check.Close()
		return n, fmt.Errorf("backup: the copy is not a store: %w", err)
	}
	_ = check.Close()
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return n, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return n, fmt.Errorf("backup: %w", err)
	}
	return n, nil
}

func backupTo(ctx context.Context, storePath string, w io.Writer) (int64, error) {
	conn, err := dialControl(ctx, ControlSocket(storePath))
	if err == nil {
		defer conn.Close()
		if _, err := io.WriteString(conn, "backup\n"); err != nil {
			return 0, fmt.Errorf("backup: ask the running service: %w", err)
		}
		r := bufio.NewReader(conn)
		header, err := r.ReadString('\n')
		if err != nil {
			return 0, errors.New("backup: the running service sent nothing (see its log)")
		}
		size, err := strconv.ParseInt(strings.TrimSpace(header), 10, 64)
		if err != nil || size <= 0 {
			return 0, fmt.Errorf("backup: the running service answered %q, not a backup", strings.TrimSpace(header))
		}
		n, err := io.Copy(w, io.LimitReader(r, size))
		if err != nil {
			return n, fmt.Errorf("backup: stream from the running service: %w", err)
		}
		if n != size {
			return n, fmt.Errorf("backup: the copy was cut off after %d of %d bytes (see the service's log)", n, size)
		}
		return n, nil
	}
	// Nobody answers: the service is not running, so open the store ourselves.
	if _, statErr := os.Stat(storePath); statErr != nil {
		return 0, fmt.Errorf("backup: no store at %s: %w", storePath, statErr)
	}
	st, err := storage.Open(storePath, storage.Options{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer st.Close()
	return st.WriteTo(w)
}
