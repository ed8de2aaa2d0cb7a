package main

import (
	"strings"
	"testing"
)

// TestChatPrompt: `anima chat` showed no prompt (issue 36). The prompt shows first, again
// after each of anima's lines, and a message that comes while it shows takes its place.
func TestChatPrompt(t *testing.T) {
	var out strings.Builder
	p := newPromptWriter(&out)
	in := typedReader{strings.NewReader("hello\n"), p}
	buf := make([]byte, 64)
	if _, err := in.Read(buf); err != nil { // the person types a line and Enter
		t.Fatal(err)
	}
	if _, err := p.Write([]byte("anima: hi!\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write([]byte("anima: still there?\n")); err != nil { // anima writes first
		t.Fatal(err)
	}
	want := "you> anima: hi!\nyou> \r\x1b[Kanima: still there?\nyou> "
	if out.String() != want {
		t.Errorf("console shows %q, want %q", out.String(), want)
	}
}
