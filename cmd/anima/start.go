package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
)

// startCommand is the command line `anima init` prints to start anima with the file out,
// the way this process was started: `go run ./cmd/anima run` under go run, else this
// binary as it was invoked. The file is left out when `anima run` given none would find
// it by the configuration rule (defaultConfig) wherever the person runs it from: when out
// is ./anima.yaml and neither $ANIMA_CONFIG nor a systemd credential comes first.
func startCommand(out string) string {
	line := self() + " run"
	if os.Getenv("ANIMA_CONFIG") != "" || credential() != "" || filepath.Clean(out) != "anima.yaml" {
		line += " " + shellQuote(out)
	}
	return line
}

// self is the command that runs this program again from the current directory.
func self() string {
	exe, exeErr := os.Executable()
	if exeErr == nil && builtByGoRun(exe) {
		if st, err := os.Stat(filepath.Join("cmd", "anima")); err == nil && st.IsDir() {
			return "go run ./cmd/anima"
		}
		// Elsewhere in the module the package path works too.
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
			return "go run " + bi.Path
		}
	}
	arg0 := os.Args[0]
	if strings.ContainsRune(arg0, filepath.Separator) {
		return shellQuote(arg0) // as typed: bin/anima, ./anima, /usr/local/bin/anima
	}
	// Found on $PATH: the same name finds it again, if it finds this binary.
	if p, err := exec.LookPath(arg0); err == nil && exeErr == nil && sameFile(p, exe) {
		return arg0
	}
	if exeErr == nil {
		return shellQuote(exe)
	}
	return "anima"
}

// goRunCache matches the folder go run keeps a cached executable in: GOCACHE/xx/<sha256>-d.
var goRunCache = regexp.MustCompile(`^[0-9a-f]{64}-d$`)

// builtByGoRun reports whether exe is a binary `go run` built: in a temporary
// go-build*/b001/exe folder, or (Go 1.24 on) cached in the build cache.
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" && filepath.Base(filepath.Dir(dir)) == "b001" {
		return true
	}
	if goRunCache.MatchString(filepath.Base(dir)) {
		return true
	}
	for _, elem := range strings.Split(filepath.ToSlash(dir), "/") {
		if strings.HasPrefix(elem, "go-build") {
			return true
		}
	}
	return false
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@+,%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
