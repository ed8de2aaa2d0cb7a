package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFakesOnly plays anima init and anima run against --fakes over HTTP: the person's
// message, "/start" and the code read from the input, comes only with a long poll, and the reply to their chat prints "answered".
func TestFakesOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	inR, inW := io.Pipe()
	defer inW.Close()
	go func() { _, _ = io.WriteString(inW, "some line\ncode 123456\n") }()
	lt := &loadtest{o: options{fakesOnly: true}, in: inR, out: pw}
	done := make(chan error, 1)
	go func() {
		err := lt.run(runCtx)
		pw.Close()
		done <- err
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(pr); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	printed := map[string]string{}
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %q", want)
				}
				k, v, _ := strings.Cut(l, " ")
				printed[k] = v
				if k == want {
					return v
				}
			case <-ctx.Done():
				t.Fatalf("no %q line: %v", want, ctx.Err())
			}
		}
	}
	next("ready")
	api := printed["telegram"] + "/bot" + printed["token"] + "/"
	if printed["openai"] == "" || printed["user"] != "4242" {
		t.Fatalf("printed %v, want an openai URL and user 4242", printed)
	}

	// Short polls (init's first, which skips what is pending) find nothing; the message
	// comes once the bot long-polls.
	for i := range 2 {
		if ups := getUpdates(ctx, t, api, 0); len(ups) != 0 {
			t.Fatalf("short getUpdates %d returned %d updates, want 0 before a long poll", i+1, len(ups))
		}
	}
	ups := getUpdates(ctx, t, api, 10)
	if len(ups) != 1 || ups[0].Message.From.ID != 4242 || ups[0].Message.Text != "/start 123456" {
		t.Fatalf("long poll returned %+v, want one \"/start 123456\" from 4242", ups)
	}
	if got := next("sent"); !strings.Contains(got, "4242") {
		t.Errorf("sent line %q does not name user 4242", got)
	}
	call(ctx, t, api+"sendMessage", map[string]any{"chat_id": 4242, "text": "echo: /start 123456"}, nil)
	if d, err := time.ParseDuration(next("answered")); err != nil || d < 0 {
		t.Errorf("answered %q: want a duration (%v)", printed["answered"], err)
	}
	if got := next("reply"); got != `"echo: /start 123456"` {
		t.Errorf("reply %s, want the text sent", got)
	}

	// Talking on: a "say TEXT" line is the person's next message, and every reply prints
	// (only the first did, and no line after the code was read: issue 36).
	go func() { _, _ = io.WriteString(inW, "say how are you?\n") }()
	if got := next("sent"); !strings.Contains(got, `"how are you?"`) {
		t.Errorf("sent line %q, want the said text", got)
	}
	ups = getUpdatesFrom(ctx, t, api, 10, ups[0].UpdateID+1)
	if len(ups) != 1 || ups[0].Message.Text != "how are you?" {
		t.Fatalf("long poll returned %+v, want one \"how are you?\"", ups)
	}
	for _, text := range []string{"fine", "and you?"} {
		call(ctx, t, api+"sendMessage", map[string]any{"chat_id": 4242, "text": text}, nil)
		next("answered")
		if got := next("reply"); got != strconv.Quote(text) {
			t.Errorf("reply %s, want %q", got, text)
		}
	}

	stop()
	if err := <-done; err != nil {
		t.Fatalf("fakes after cancel: %v, want nil", err)
	}
}

type update struct {
	UpdateID int64 `json:"update_id"`
	Message  struct {
		Text string `json:"text"`
		From struct {
			ID int64 `json:"id"`
		} `json:"from"`
	} `json:"message"`
}

func getUpdates(ctx context.Context, t *testing.T, api string, timeout int) []update {
	t.Helper()
	var ups []update
	call(ctx, t, api+"getUpdates", map[string]any{"timeout": timeout}, &ups)
	return ups
}

// getUpdatesFrom is getUpdates confirming the updates before offset.
func getUpdatesFrom(ctx context.Context, t *testing.T, api string, timeout int, offset int64) []update {
	t.Helper()
	var ups []update
	call(ctx, t, api+"getUpdates", map[string]any{"timeout": timeout, "offset": offset}, &ups)
	return ups
}

// call posts params as JSON and decodes the result into out (if not nil).
func call(ctx context.Context, t *testing.T, url string, params map[string]any, out any) {
	t.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if !env.OK {
		t.Fatalf("%s: %s", url[strings.LastIndex(url, "/")+1:], env.Description)
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			t.Fatal(err)
		}
	}
}
