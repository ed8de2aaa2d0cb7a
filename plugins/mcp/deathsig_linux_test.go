package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anima-bot/anima/brain"
	"github.com/anima-bot/anima/brain/cognition"
)

const (
	// animaEnv, set to a pid file, makes the test binary an anima (TestAnimaHelperProcess).
	animaEnv = "ANIMA_MCP_TEST_ANIMA"
	// stubbornEnv makes the test binary a stdio server that outlives its stdin
	// (TestStubbornHelperProcess).
	stubbornEnv = "ANIMA_MCP_TEST_STUBBORN"
)

// TestStubbornHelperProcess is not a test: run with stubbornEnv set, it serves testTools
// over stdio and then, when its stdin closes, runs on, as a server that does not notice
// anima is gone would.
func TestStubbornHelperProcess(t *testing.T) {
	if os.Getenv(stubbornEnv) == "" {
		t.Skip("the stdio MCP server of TestServerDiesWithAnima")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "stubborn", Version: "1"}, nil)
	testTools(s)
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	select {}
}

// TestAnimaHelperProcess is not a test: run with animaEnv set to a pid file, it runs a
// Manager of one stubborn server recording its group there, has the server start a child
// (its spawn tool), prints "child <pid>" and waits to be killed.
func TestAnimaHelperProcess(t *testing.T) {
	pids := os.Getenv(animaEnv)
	if pids == "" {
		t.Skip("the anima of TestServerDiesWithAnima")
	}
	srv := Server{Name: "stubborn", Command: []string{os.Args[0], "-test.run=^TestStubbornHelperProcess$"},
		Env: map[string]string{stubbornEnv: "1"}, Timeout: 20 * time.Second}
	sink := &watched{Registry: cognition.NewRegistry(), changes: make(chan []string, 16)}
	go func() { _ = New([]Server{srv}, sink, Options{Pids: pids}).Run(context.Background()) }()
	sink.next(t)
	tools := sink.Tools(brain.ProfileChat)
	i := slices.IndexFunc(tools, func(x brain.Tool) bool { return x.Spec().Name == "stubborn_spawn" })
	if i < 0 {
		t.Fatal("no stubborn_spawn offered")
	}
	res, err := tools[i].Call(context.Background(), brain.ToolCall{Args: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(res.Content, "<untrusted>\n")
	fmt.Printf("child %s\n", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "</untrusted>")))
	select {}
}

// TestServerDiesWithAnima: when anima is killed with SIGKILL its stdio server dies with
// it (Pdeathsig), though it ignores its stdin's end; the child the server started, in
// its process group, is ended by the next start, from the record beside the store.
func TestServerDiesWithAnima(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(t.TempDir(), "anima.db.mcp-pids")
	anima := exec.Command(os.Args[0], "-test.run=^TestAnimaHelperProcess$")
	anima.Env = append(os.Environ(), animaEnv+"="+pids)
	out, err := anima.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := anima.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = anima.Process.Kill(); _ = anima.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if c, ok := strings.CutPrefix(sc.Text(), "child "); ok {
				line <- c
			}
		}
	}()
	var child int
	select {
	case c := <-line:
		if child, err = strconv.Atoi(c); err != nil {
			t.Fatalf("no child pid in %q", c)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the helper anima never started its server's child")
	}
	data, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	_, groups, bad := readProcFile(data)
	if len(groups) != 1 || bad > 0 {
		t.Fatalf("recorded %v (%d bad lines), want the one server's group:\n%s", groups, bad, data)
	}
	server := groups[0].Pgrp
	t.Cleanup(func() { killPgid(server) }) // when the test fails
	if !alive(server) || !alive(child) {
		t.Fatalf("server %d alive %v, its child %d alive %v; want both running", server, alive(server), child, alive(child))
	}

	if err := anima.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = anima.Wait()
	waitGone(t, server, "the server, after anima was killed with SIGKILL")
	if !alive(child) {
		t.Fatalf("the server's child %d died with anima; want it left for the next start to end", child)
	}

	startConfigured(t, pids, nil)
	waitGone(t, child, "the server's child, after the next start")
	if data, err := os.ReadFile(pids); err != nil || strings.Count(string(data), "\n") != 1 {
		t.Errorf("after the start the record is %q (%v), want only its boot line", data, err)
	}
}

// waitGone fails t unless process pid is gone (or a zombie) within 10 s.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d still runs 10 s later", what, pid)
		}
		time.Sleep(10 * time.Millisecond) // polling a process we cannot wait for
	}
}

// TestChildOutlivesForkingThread: Pdeathsig follows the OS thread that forked the child,
// not the process. A server started from a goroutine that locked its thread and returned
// without unlocking it (so the runtime ended the thread) is killed at once; one started
// through spawned, from a thread of its own, lives on and answers.
func TestChildOutlivesForkingThread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		spawned bool
	}{{"plain CommandTransport", false}, {"spawned", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, stop, err := transport(helperServer("h"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := tr.(*mcp.CommandTransport).Command
			if tc.spawned {
				tr, stop = New(nil, nil, Options{}).track(tr, stop)
			}
			t.Cleanup(stop)
			type conn struct {
				tid  int
				sess *mcp.ClientSession
				err  error
			}
			done := make(chan conn, 1)
			onEndingThread(func(tid int) {
				sess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, nil)
				done <- conn{tid, sess, err}
			})
			c := <-done
			if c.err != nil {
				t.Fatal(c.err)
			}
			t.Cleanup(func() { _ = c.sess.Close() })
			waitGone(t, c.tid, "the goroutine's locked thread")
			pid := cmd.Process.Pid
			if !tc.spawned {
				waitGone(t, pid, "the server forked from the thread that ended")
				return
			}
			if !alive(pid) || killPending(t, pid) {
				t.Fatalf("the server %d was killed when a thread it was not forked from ended", pid)
			}
			res, err := c.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
			if err != nil || res.IsError {
				t.Fatalf("echo after the thread ended: %v %+v", err, res)
			}
		})
	}
}

// onEndingThread runs f in a goroutine locked to an OS thread that the runtime ends when
// f returns: any thread but the main one, which it never ends.
func onEndingThread(f func(tid int)) {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if tid := syscall.Gettid(); tid != os.Getpid() {
			f(tid)
			return
		}
		// The main thread: hand f to a goroutine that cannot run here while this one holds it.
		handed := make(chan struct{})
		onEndingThread(func(tid int) { close(handed); f(tid) })
		<-handed
		runtime.UnlockOSThread()
	}()
}

// killPending reports whether process pid has a SIGKILL pending (/proc/<pid>/status).
func killPending(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true // gone
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "SigPnd" || k == "ShdPnd") {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}
