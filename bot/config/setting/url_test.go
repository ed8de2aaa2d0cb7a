package setting

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
		{"none", "connection closed", "connection closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactURLs(tc.in); got != tc.want {
				t.Errorf("RedactURLs(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}
