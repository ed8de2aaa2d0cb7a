package brain

import "testing"

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "https://mcp.example.com/v1", "https://mcp.example.com/v1"},
		{"query", "https://mcp.example.com/mcp?api_key=SECRET&x=1", "https://mcp.example.com/mcp?***"},
		{"userinfo", "http://user:SECRET@127.0.0.1:8080/mcp", "http://***@127.0.0.1:8080/mcp"},
		{"token as user", "https://SECRET@host/", "https://***@host/"},
		{"net/http's masked password", "http://user:***@host/p?k=SECRET", "http://***@host/p?***"},
		{"fragment", "https://host/p#SECRET", "https://host/p#***"},
		{"empty query", "https://host/p?", "https://host/p?***"},
		{"not a URL", "http://%zz/SECRET", "(a URL, not shown)"},
		{"no scheme", "host/p?key=SECRET", "host/p?***"},
		// Some endpoints take the key in the path (issue 33: sim --live printed /v1/sk-…).
		{"key in the path", "https://llm.example.com/v1/sk-proj-SECRET/chat", "https://llm.example.com/v1/***/chat"},
		{"short prefixed key", "https://h/sk-x", "https://h/***"},
		{"bot token", "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe",
			"https://api.telegram.org/***/getMe"},
		{"random key", "https://mcp.example.com/s/Zm9vYmFyYmF6cXV4MTIz/mcp", "https://mcp.example.com/s/***/mcp"},
		{"base64url key with dashes", "https://h/hook/aB3-_x9Kq-Lm2_zz8-Qw4_Er6-Ty1_Ui0-Op5", "https://h/hook/***"},
		{"UUID", "https://h/webhook/0f8fad5b-d9cb-469f-a165-70867728950e", "https://h/webhook/***"},
		{"escaped key", "https://h/v1/sk%2DSECRET", "https://h/v1/***"},
		{"all parts", "https://u:SECRET@h:8443/v1/sk-SECRET/x?token=SECRET#SECRET", "https://***@h:8443/v1/***/x?***#***"},
		{"names stay", "https://h/openai/deployments/gpt-4o-mini-2024-07-18/chat/completions",
			"https://h/openai/deployments/gpt-4o-mini-2024-07-18/chat/completions"},
		{"words stay", "http://localhost:11434/v1/api/embeddings", "http://localhost:11434/v1/api/embeddings"},
		{"telegram path stays", "https://bot.example.com/telegram", "https://bot.example.com/telegram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"net/http error", `calling "initialize": Post "http://u:***@127.0.0.1:1/mcp?api_key=SECRET": dial tcp: connection refused`,
			`calling "initialize": Post "http://***@127.0.0.1:1/mcp?***": dial tcp: connection refused`},
		{"two URLs, unquoted", "from https://a/x?k=SECRET to HTTP://b/y?k=SECRET2 (moved)",
			"from https://a/x?*** to http://b/y?*** (moved)"},
		{"sentence punctuation", "http://127.0.0.1:1 sent it to http://127.0.0.1:2; or http://h/p?k=SECRET. (see https://h/x)",
			"http://127.0.0.1:1 sent it to http://127.0.0.1:2; or http://h/p?***. (see https://h/x)"},
		{"key in the path", `Post "https://h/v1/sk-SECRET/chat/completions": EOF`, `Post "https://h/v1/***/chat/completions": EOF`},
		{"none", "connection closed", "connection closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactURLs(tc.in); got != tc.want {
				t.Errorf("RedactURLs(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}
