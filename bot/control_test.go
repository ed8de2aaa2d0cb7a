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
