package main

import (
	"io"
	"os"
	"sync"
)

// chatPrompt is what `anima chat` shows where the person types.
const chatPrompt = "you> "

// promptWriter is the console's output with a prompt: after each whole line anima
// writes it shows chatPrompt again, and a message that arrives while the prompt shows
// (anima writing first) takes its place rather than following it on the line.
type promptWriter struct {
	mu      sync.Mutex
	w       io.Writer
	showing bool // the prompt ends what is on the terminal
}

// newPromptWriter shows the first prompt on w and returns the writer that keeps it.
func newPromptWriter(w io.Writer) *promptWriter {
	p := &promptWriter{w: w}
	p.show()
	return p
}

func (p *promptWriter) show() {
	if _, err := io.WriteString(p.w, chatPrompt); err == nil {
		p.showing = true
	}
}

func (p *promptWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.showing {
		// Back to the start of the line and clear it: the message goes where the prompt was.
		if _, err := io.WriteString(p.w, "\r\x1b[K"); err != nil {
			return 0, err
		}
		p.showing = false
	}
	n, err := p.w.Write(b)
	if err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
		p.show()
	}
	return n, err
}

// Typed marks that the person ended a line (the terminal moved past the prompt).
func (p *promptWriter) typed() {
	p.mu.Lock()
	p.showing = false
	p.mu.Unlock()
}

// typedReader tells the prompt when a line was read from the person.
type typedReader struct {
	r io.Reader
	p *promptWriter
}

func (t typedReader) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	for _, c := range b[:n] {
		if c == '\n' {
			t.p.typed()
		}
	}
	return n, err
}

// interactive reports whether r is a terminal (a character device), where a prompt helps;
// a pipe or a file gets none, so scripts read only anima's lines.
func interactive(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
