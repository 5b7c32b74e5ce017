package mcp_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/mcp"
)

// TestParseConfig: [mcp.NAME] tables become servers; what is wrong is a
// ConfigError naming the server and the field, never quoting a token or
// a header value; other tables are another package's.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       string // the servers as String() renders them, sorted; or the error's field
		field      string
	}{
		{"stdio", "default = \"local\"\n[providers.local]\nmodel = \"m\"\n[mcp.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg@1.0.0\"]\nenv = { A = \"1\" }\nstart = \"session\"\ntimeout = 2.5\n",
			`fs: stdio npx ["-y" "pkg@1.0.0"] (env [A])`, ""},
		{"http", "[mcp.web]\nurl = \"https://example.com/mcp\"\ncredential = \"env:WEB_TOKEN\"\nheaders = { X-Key = \"hunter22\" }\n",
			`web: http https://example.com/mcp (headers [X-Key], credential "WEB_TOKEN")`, ""},
		{"none", "[providers.local]\nmodel = \"m\"\n", "", ""},
		{"both", "[mcp.x]\ncommand = \"a\"\nurl = \"http://b/mcp\"\n", "", "url"},
		{"neither", "[mcp.x]\nargs = [\"a\"]\n", "", "command"},
		{"pasted token", "[mcp.x]\nurl = \"http://b/mcp\"\ntoken = \"sk-abcdef\"\n", "", "credential"},
		{"literal credential", "[mcp.x]\nurl = \"http://b/mcp\"\ncredential = \"sk-abcdef\"\n", "", "credential"},
		{"authorization header", "[mcp.x]\nurl = \"http://b/mcp\"\nheaders = { Authorization = \"Bearer sk-abcdef\" }\n", "", "headers"},
		{"unknown key", "[mcp.x]\ncommand = \"a\"\nfrob = 1\n", "", "frob"},
		{"bad name", "[mcp.\"a__b\"]\ncommand = \"a\"\n", "", "name"},
		{"bad start", "[mcp.x]\ncommand = \"a\"\nstart = \"later\"\n", "", "start"},
		{"negative timeout", "[mcp.x]\ncommand = \"a\"\ntimeout = -1\n", "", "timeout"},
		{"env on http", "[mcp.x]\nurl = \"http://b/mcp\"\nenv = { A = \"1\" }\n", "", "env"},
		{"not a table", "mcp = 3\n", "", "config"},
		{"a server not a table", "[mcp]\nfs = 3\n", "", "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers, err := mcp.ParseConfig("providers.toml", []byte(tc.toml))
			if tc.field != "" {
				var ce *mcp.ConfigError
				if !errors.As(err, &ce) || ce.Field != tc.field {
					t.Fatalf("ParseConfig = %v, want a ConfigError on %s", err, tc.field)
				}
				if strings.Contains(err.Error(), "sk-abcdef") {
					t.Fatalf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range servers {
				got = append(got, s.String())
			}
			if strings.Join(got, "\n") != tc.want {
				t.Fatalf("servers = %q, want %q", got, tc.want)
			}
		})
	}
	servers, _ := mcp.ParseConfig("p", []byte("[mcp.fs]\ncommand = \"x\"\nstart = \"session\"\ntimeout = 2.5\n"))
	if fs := servers["fs"]; !fs.StartWithSession || fs.Timeout != 2500*time.Millisecond {
		t.Fatalf("fs = %+v", fs)
	}
}
