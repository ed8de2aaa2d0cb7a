package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anima-bot/anima/brain/braintest"

	"github.com/anima-bot/anima/brain/cognition/openaitest"
	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// validToken has Telegram's shape (digits, a colon, 30+ URL-safe characters), unlike
// telegramtest.DefaultToken.
const validToken = "7012345678:AAHk3_fake-Token_for-tests-0123456789abc"

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// running is `anima run` started by startLogged.
type running struct {
	metrics string            // the metrics server's address
	stderr  *braintest.Buffer // readable while it runs
	stop    func()            // SIGTERM, then wait for exit 0 (idempotent)
}

// startWithToken starts anima with validToken (startLogged, extra added to its
// configuration) against a fresh fake Telegram that knows the token and a fresh fake model.
func startWithToken(t *testing.T, extra string) (*telegramtest.Server, *openaitest.Server, *running) {
	t.Helper()
	tg := telegramtest.New(t, telegramtest.WithToken(validToken))
	ai := openaitest.New(t)
	return tg, ai, startLogged(t, tg.URL, ai.URL(), validToken, extra)
}

// startLogged runs `anima run` against the fakes with token and the metrics server on a
// free loopback port; extra is appended to the configuration.
func startLogged(t *testing.T, tgURL, aiURL, token, extra string) *running {
	t.Helper()
	dir := t.TempDir()
	r := &running{metrics: freeAddr(t), stderr: &braintest.Buffer{}}
	path := writeConfigWith(t, dir, testConfig{tgURL: tgURL, aiURL: aiURL, metrics: r.metrics, extra: extra})
	cmd := exec.Command(binary, "run", "--config", path)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+token)
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Errorf("SIGTERM: %v", err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("anima exited with %v after SIGTERM, want 0", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("anima did not stop within 15s of SIGTERM")
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("anima stderr:\n%s", r.stderr.String())
		}
	})
	// Wait for the metrics server.
	ctx := waitCtx(t, 10*time.Second)
	for {
		c, err := net.Dial("tcp", r.metrics)
		if err == nil {
			_ = c.Close()
			return r
		}
		if ctx.Err() != nil {
			t.Fatalf("the metrics server never listened on %s: %v", r.metrics, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTokenNeverLeaks runs the binary against a Bot API that fails behind a proxy whose
// error pages quote the requested URL (Squid's do: "The requested URL could not be
// retrieved: https://…/bot<TOKEN>/getMe"), and 5xx answers: every call retried, every
// failure logged at debug level, /readyz asked while Telegram fails. The token must not
// appear in the log nor in any /healthz or /readyz body.
func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	secretHalf := validToken[strings.IndexByte(validToken, ':')+1:]
	tg := telegramtest.New(t, telegramtest.WithToken(validToken))
	ai := openaitest.New(t)
	proxyPage := func(method string) telegramtest.Fault {
		return telegramtest.Fault{Code: http.StatusBadGateway, RawBody: "<html><body><h1>ERROR</h1>" +
			"The requested URL could not be retrieved: " + tg.URL + "/bot" + validToken + "/" + method + "</body></html>"}
	}
	for _, m := range []string{"getMe", "getMe", "deleteWebhook", "setMyCommands", "sendChatAction", "sendMessage", "answerCallbackQuery"} {
		tg.InjectFault(m, proxyPage(m))
	}
	tg.InjectFault("getUpdates", proxyPage("getUpdates"))
	tg.FailNext("getUpdates", 1, http.StatusInternalServerError, 0)
	// A slow answer, so the typing indicator is asked for (and fails).
	slow := openaitest.Answer("here I am", "active", 0.9)
	slow.Delay = 700 * time.Millisecond
	ai.Enqueue(slow)

	a := startLogged(t, tg.URL, ai.URL(), validToken, "log:\n  level: debug\n")
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + a.metrics + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp.StatusCode, string(b)
	}
	var bodies []string
	ctx := waitCtx(t, 40*time.Second)
	// Polling starts only after getMe and deleteWebhook got through their failures.
	if _, err := tg.WaitCalls(ctx, "getUpdates", 2); err != nil {
		t.Fatalf("polling never started: %v", err)
	}
	tg.PushCallback(user, user, "noop")
	tg.PushText(user, user, "are you there?")
	if got := firstSent(ctx, t, tg); got != "here I am" {
		t.Errorf("reply = %q", got)
	}

	// /readyz while getMe fails: 503, then ready again once Telegram answers.
	tg.InjectFault("getMe", proxyPage("getMe"))
	code, body := get("/readyz")
	bodies = append(bodies, body)
	// A fixed text per check: no error details in an unauthenticated answer.
	if want := "not ready\nstore: ok\ntelegram: unavailable\n"; code != http.StatusServiceUnavailable || body != want {
		t.Errorf("/readyz while getMe fails = %d %q, want 503 %q", code, body, want)
	}
	code, body = get("/readyz")
	bodies = append(bodies, body)
	if code != http.StatusOK {
		t.Errorf("/readyz after recovery = %d %q, want 200", code, body)
	}
	code, body = get("/healthz")
	bodies = append(bodies, body)
	if code != http.StatusOK {
		t.Errorf("/healthz = %d %q", code, body)
	}
	a.stop()

	logs := a.stderr.String()
	for _, want := range []string{"telegram getMe failed, retrying", "telegram deleteWebhook failed, retrying",
		"telegram getUpdates failed, retrying", "telegram send failed, retrying", "setMyCommands failed",
		"answerCallbackQuery failed", "typing indicator", "readiness check failed", "/bot[redacted]/getMe"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q: the failure did not reach the log, so the test proves nothing", want)
		}
	}
	for _, leaked := range []string{validToken, secretHalf} {
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, leaked) {
				t.Errorf("the token leaks into the log: %s", line)
			}
		}
		for _, b := range bodies {
			if strings.Contains(b, leaked) {
				t.Errorf("the token leaks into a health body: %q", b)
			}
		}
	}
}

// TestMetricsServerHoldsBoundedConnections opens more idle keep-alive connections to the
// binary's metrics server than its cap (64): the first 64 are served, the next waits in
// the backlog, and is served as soon as one of the others leaves. Without a cap every
// idle connection costs a file descriptor for as long as the client likes.
func TestMetricsServerHoldsBoundedConnections(t *testing.T) {
	t.Parallel()
	const limit = 64
	_, _, a := startWithToken(t, "")

	request := func(conn net.Conn) {
		t.Helper()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: anima\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	var held []net.Conn
	for i := range limit {
		conn, err := net.Dial("tcp", a.metrics)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		request(conn)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		_ = resp.Body.Close()
		held = append(held, conn) // idle keep-alive from here on
	}
	extra, err := net.Dial("tcp", a.metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	request(extra)
	r := bufio.NewReader(extra)
	_ = extra.SetReadDeadline(time.Now().Add(300 * time.Millisecond)) // a bounded check that nothing comes
	if _, err := r.Peek(1); err == nil {
		t.Fatalf("connection %d was served while %d idle ones were held", limit+1, limit)
	}
	_ = held[0].Close()
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the waiting connection was not served after one left: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
}
