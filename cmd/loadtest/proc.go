package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anima-bot/anima/channels/telegram/telegramtest"
)

// stopTimeout bounds how long anima may take to exit after SIGTERM.
const stopTimeout = 15 * time.Second

// proc is one running anima process.
type proc struct {
	cmd     *exec.Cmd
	log     string    // path of the file holding its stderr and stdout
	started time.Time // just before exec
	exited  chan struct{}
	err     error // cmd.Wait's result, set before exited is closed
}

// writeConfig writes a configuration for one anima process pointing at the fakes, with a
// fresh store in dir and /metrics on metricsListen, and returns its path. mcp, if set, is
// the argv of a stdio MCP server to configure, split on spaces.
func writeConfig(dir, tgURL, aiURL, metricsListen string, users []int64, mcp string) (string, error) {
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = strconv.FormatInt(u, 10)
	}
	cfg := fmt.Sprintf(`telegram:
  token: ${ANIMA_TELEGRAM_TOKEN}
  api_url: %s
  mode: polling
  allowed_users: [%s]
llm:
  base_url: %s
  api_key: loadtest
  request_timeout: 10s
storage:
  path: %s
metrics:
  listen: %q
proactive:
  enabled: false
brain:
  tick: 1s
log:
  level: warn
`, tgURL, strings.Join(ids, ", "), aiURL, filepath.Join(dir, "anima.db"), metricsListen)
	if argv := strings.Fields(mcp); len(argv) > 0 {
		for i, a := range argv {
			argv[i] = strconv.Quote(a)
		}
		cfg += "mcp:\n  servers:\n    loadtest:\n      command: [" + strings.Join(argv, ", ") + "]\n"
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", fmt.Errorf("write config: %w", err)
	}
	return path, nil
}

// startAnima runs `binary run --config cfg [extra...]` with its output in dir/anima.log.
func startAnima(binary, dir, cfg string, extra ...string) (*proc, error) {
	logPath := filepath.Join(dir, "anima.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	cmd := exec.Command(binary, append([]string{"run", "--config", cfg}, extra...)...)
	cmd.Env = append(os.Environ(), "ANIMA_TELEGRAM_TOKEN="+telegramtest.DefaultToken)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p := &proc{cmd: cmd, log: logPath, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// alive reports an error if the process has exited.
func (p *proc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("anima exited unexpectedly: %v", p.err)
	default:
		return nil
	}
}

// watch returns a context that ends with parent or when the process exits.
func (p *proc) watch(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-p.exited:
			cancel(fmt.Errorf("anima exited: %v", p.err))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// stop sends SIGTERM and waits for the process; anything but a prompt exit 0 is an error.
func (p *proc) stop() (time.Duration, error) {
	if err := p.alive(); err != nil {
		return 0, err
	}
	at := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("signal anima: %w", err)
	}
	select {
	case <-p.exited:
		took := time.Since(at)
		if p.err != nil {
			return took, fmt.Errorf("anima exited with %v after SIGTERM, want 0", p.err)
		}
		return took, nil
	case <-time.After(stopTimeout):
		p.kill()
		return stopTimeout, fmt.Errorf("anima did not exit within %v of SIGTERM", stopTimeout)
	}
}

// kill ends the process at once (cleanup after an error); it is a no-op once it exited.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// logTail returns the last n lines of the process's output.
func (p *proc) logTail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cpuSplit returns utime and stime of pid from /proc/<pid>/stat, in clock ticks.
func cpuSplit(pid int) (user, system int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read stat: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: split after it.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("read stat: no command name")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("read stat: %d fields", len(f)+2)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("read stat: %w", err)
	}
	return utime, stime, nil
}

// clockTicks is sysconf(_SC_CLK_TCK) as getconf reports it, or Linux's usual 100.
func clockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || n <= 0 {
		return 100
	}
	return n
}

// memory is the resident set of a process.
type memory struct {
	RSS, HWM      int64 // VmRSS and VmHWM (peak), bytes
	Anon, FileMap int64 // RssAnon (heap, stacks) and RssFile (the binary's mapped pages), bytes
}

// phaseEnd is the CPU time the process at pid has used (user and system, in clock ticks)
// and its memory, read together as a phase ends.
func phaseEnd(pid int) (user, system int64, mem memory, err error) {
	if user, system, err = cpuSplit(pid); err != nil {
		return 0, 0, memory{}, err
	}
	mem, err = readMemory(pid)
	return user, system, mem, err
}

// readMemory reads VmRSS and VmHWM from /proc/<pid>/status.
func readMemory(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("read status: %w", err)
	}
	var m memory
	for line := range strings.Lines(string(data)) {
		key, val, ok := strings.Cut(line, ":")
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.HWM
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.FileMap
		}
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(val) // "12345 kB"
		if len(f) != 2 || f[1] != "kB" {
			return memory{}, fmt.Errorf("read status: unexpected %s line %q", key, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("read status %s: %w", key, err)
		}
		*dst = kb << 10
	}
	if m.RSS == 0 || m.HWM == 0 {
		return memory{}, errors.New("read status: no VmRSS/VmHWM")
	}
	return m, nil
}
