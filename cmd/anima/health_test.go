package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// freePort returns a TCP port nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// health runs `anima health` and returns its exit code and output.
func health(t *testing.T, path string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, "health", "--config", path)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestHealthCommand: `anima health` exits 0 only while the instance it is configured for
// answers /readyz with 200, and says why in one line otherwise. The instance listens on
// the wildcard address, as in the Docker image; health asks it on loopback.
func TestHealthCommand(t *testing.T) {
	_, _, path := fakeService(t)
	editConfig(t, path, `listen: "127.0.0.1:0"`, `listen: "0.0.0.0:`+freePort(t)+`"`)

	code, out := health(t, path)
	if code == 0 || !strings.Contains(out, "connection refused") || strings.Count(strings.TrimSpace(out), "\n") > 0 {
		t.Fatalf("health before anima runs: exit %d, %q; want non-zero and one line saying why", code, out)
	}

	p := start(t, "run", "--config", path)
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		code, out = health(t, path)
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health never passed while anima ran: exit %d, %q", code, out)
		}
		<-tick.C
	}
	if strings.TrimSpace(out) != "ready" {
		t.Errorf("healthy output %q, want \"ready\"", out)
	}

	p.stop(t)
	if code, out := health(t, path); code == 0 || !strings.Contains(out, "is anima running?") {
		t.Errorf("health after anima stopped: exit %d, %q; want non-zero", code, out)
	}
}

func TestHealthCommandWithoutMetrics(t *testing.T) {
	t.Parallel()
	path := offlineConfig(t, "")
	editConfig(t, path, `listen: "127.0.0.1:0"`, `listen: ""`)
	if code, out := health(t, path); code == 0 || !strings.Contains(out, "metrics.listen is empty") {
		t.Errorf("health without a metrics server: exit %d, %q; want non-zero naming metrics.listen", code, out)
	}
}

// TestNoAPIKeyForRemoteModelFailsFast: `anima chat` and `anima run` refuse at once, naming
// llm.api_key, when the model endpoint is not on this machine and no key is set. The
// endpoint is a documentation address (192.0.2.1): it is never contacted.
func TestNoAPIKeyForRemoteModelFailsFast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeConfig(t, dir, "http://127.0.0.1:1", "http://192.0.2.1:9/v1", "")
	editConfig(t, path, "api_key: test", `api_key: ""`)
	for _, cmdName := range []string{"chat", "run"} {
		t.Run(cmdName, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(binary, cmdName, "--config", path)
			cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
			cmd.Stdin = strings.NewReader("hello\n")
			start := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("%s without an API key for a remote endpoint exited 0:\n%s", cmdName, out)
			}
			if !strings.Contains(string(out), "llm.api_key: is empty but llm.base_url points at 192.0.2.1") {
				t.Errorf("output does not name llm.api_key:\n%s", out)
			}
			if elapsed > 5*time.Second { // the target is well under 1s; this bound only catches a hang
				t.Errorf("took %v", elapsed)
			}
		})
	}
}
