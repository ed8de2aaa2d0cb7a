package bot_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anima-bot/anima/bot"
)

// TestBackupRefusesACutOffCopy: a service that dies halfway through the stream must not
// leave a truncated file that looks like a backup.
func TestBackupRefusesACutOffCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "anima.db")
	ln, err := net.Listen("unix", bot.ControlSocket(store))
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
	_, err = bot.Backup(context.Background(), store, out)
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

// TestHotBackupWithALongStorePath: a store path too long for a unix socket address (83
// characters or more made `anima run` fail) still gets its 0600 control socket beside
// the store, and a hot backup finds it there.
func TestHotBackupWithALongStorePath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(t.TempDir(), strings.Repeat("a-long-directory-name-", 6))
	h.cfg.Storage.Path = filepath.Join(dir, "anima.db")
	if n := len(bot.ControlSocket(h.cfg.Storage.Path)); n <= 108 {
		t.Fatalf("the socket path is %d bytes: short enough for a socket address, the test proves nothing", n)
	}
	_, stop := h.start()
	defer stop()
	h.say("remember the lighthouse")
	if turns, err := h.hotBackup().History(user, 0); err != nil || len(turns) != 2 {
		t.Fatalf("restored history = %+v, %v", turns, err)
	}
}
