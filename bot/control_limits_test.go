package bot

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"
	"github.com/anima-bot/anima/channels/channelstest"
	"github.com/anima-bot/anima/storage"
	"github.com/anima-bot/anima/storage/storagetest"
)

// openStore opens a store in a fresh temporary directory, closed when the test ends.
func openStore(t *testing.T) *storage.Store {
	t.Helper()
	return storagetest.Open(t, filepath.Join(t.TempDir(), "anima.db"))
}

// serveDone runs c.serve on conn and returns a channel closed when it returns.
func serveDone(c *controlServer, conn net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.serve(conn)
	}()
	return done
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the connection was still served 5 s later", what)
	}
}

// TestControlDeadlines: a client that never sends its request, or stops reading a backup,
// is cut off (net.Pipe has no buffer: every write waits for the reader).
func TestControlDeadlines(t *testing.T) {
	t.Parallel()
	var logs braintest.Buffer
	c := &controlServer{
		store: openStore(t), log: slog.New(slog.NewTextHandler(&logs, nil)),
		readTimeout: 100 * time.Millisecond, writeTimeout: 100 * time.Millisecond,
	}

	client, server := net.Pipe()
	defer client.Close()
	waitDone(t, serveDone(c, server), "a client that never sends its request")

	client, server = net.Pipe()
	defer client.Close()
	done := serveDone(c, server)
	if _, err := io.WriteString(client, "backup\n"); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done, "a backup client that stops reading")
	if !strings.Contains(logs.String(), "backup over control socket") {
		t.Errorf("the cut-off backup is not logged:\n%s", logs.String())
	}

	// A client that keeps reading gets the whole copy, however long it takes in all.
	client, server = net.Pipe()
	defer client.Close()
	done = serveDone(c, server)
	if _, err := io.WriteString(client, "backup\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(client)
	header, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, r)
	if err != nil || header == "" || n == 0 {
		t.Fatalf("backup: header %q, %d bytes, %v", header, n, err)
	}
	waitDone(t, done, "a finished backup")
}

func TestControlCapsConnections(t *testing.T) {
	t.Parallel()
	c, err := newControlServer(openStore(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c.maxConns = 1
	channelstest.Run(t, c.Run)

	dial := func() net.Conn {
		conn, err := net.Dial("unix", c.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return conn
	}
	first := dial() // sends nothing: holds the only slot until it leaves or times out (5 s)
	second := dial()
	if _, err := io.WriteString(second, "status\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(second)
	_ = second.SetReadDeadline(time.Now().Add(200 * time.Millisecond)) // a bounded check that nothing comes
	if _, err := r.Peek(1); err == nil {
		t.Fatal("a second connection was answered with a cap of 1")
	}
	_ = first.Close()
	_ = second.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || line != "unknown request\n" {
		t.Fatalf("after the first left: %q, %v", line, err)
	}
}

func TestControlDefaultLimits(t *testing.T) {
	t.Parallel()
	c, err := newControlServer(openStore(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.ln.Close()
	if c.readTimeout != controlReadTimeout || c.writeTimeout != controlWriteTimeout || c.maxConns != controlMaxConns {
		t.Errorf("control limits: read %v write %v conns %d", c.readTimeout, c.writeTimeout, c.maxConns)
	}
}

// TestBackupRefusesACutOffCopy: a service that dies halfway through the stream must not
// leave a truncated file that looks like a backup.
func TestBackupRefusesACutOffCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "anima.db")
	ln, err := net.Listen("unix", ControlSocket(store))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = bufio.NewReader(conn).ReadString('\n')
		_, _ = conn.Write([]byte("65536\n" + strings.Repeat("x", 1000))) // then the "service" dies
	}()
	out := filepath.Join(dir, "backup.db")
	_, err = Backup(context.Background(), store, out)
	if err == nil || !strings.Contains(err.Error(), "cut off after 1000 of 65536 bytes") {
		t.Fatalf("err = %v, want the cut-off reported", err)
	}
	if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
		t.Errorf("a cut-off copy was left at %s", out)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "backup.db.tmp*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}
