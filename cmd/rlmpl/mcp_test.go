package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/mcp/mcptest"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// mcpConfig writes a providers.toml whose [mcp.local] is the test binary
// as a stdio server (TestMain serves it), plus extra, and points
// XDG_CONFIG_HOME at it.
func mcpConfig(t *testing.T, extra string) {
	t.Helper()
	dir := t.TempDir()
	srv := mcptest.Stdio("local")
	toml := fmt.Sprintf("[mcp.local]\ncommand = %q\nenv = { RLMPL_MCP_TEST_SERVER = \"1\" }\n%s", srv.Command, extra)
	if err := os.MkdirAll(filepath.Join(dir, "rlmpl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rlmpl", "providers.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
}

// TestMCPList: `rlmpl mcp list` starts each configured server and shows
// its tools with the tokens of each definition, their total and the
// ceiling; a server that cannot start is a line of its own; --json is
// one server per line; an unknown name or a bad table is a configuration
// error (exit 2).
func TestMCPList(t *testing.T) {
	mcpConfig(t, "max_tool_tokens = 4000\n\n[mcp.broken]\ncommand = \"/nonexistent/server\"\n")
	out, errs, code := rlmpl(t, "mcp", "list", "--model", "gpt-4o")
	if code != 0 {
		t.Fatalf("mcp list: %d %s", code, errs)
	}
	for _, want := range []string{"definitions counted for gpt-4o (o200k_base)", "broken  stdio /nonexistent/server", "error: mcp server broken: start_failed",
		"local  stdio ", "  echo ", "local__echo", "Echoes its text.", "9 tools, ", "ceiling 4000"} {
		if !strings.Contains(out, want) {
			t.Errorf("mcp list lacks %q:\n%s", want, out)
		}
	}
	out, _, code = rlmpl(t, "mcp", "list", "local", "--json", "--model", "gpt-4o")
	var row struct {
		Server string `json:"server"`
		Tokens int    `json:"tokens"`
		Tools  []struct {
			Name     string `json:"name"`
			Function string `json:"function"`
			Tokens   int    `json:"tokens"`
		} `json:"tools"`
	}
	if code != 0 || strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &row) != nil {
		t.Fatalf("mcp list --json: %d %q", code, out)
	}
	sum := 0
	for _, tool := range row.Tools {
		sum += tool.Tokens
		if tool.Tokens <= 0 || tool.Function != "local__"+tool.Name {
			t.Errorf("tool %+v", tool)
		}
	}
	if row.Server != "local" || len(row.Tools) != 9 || sum != row.Tokens {
		t.Fatalf("row %+v: the tools' tokens sum to %d", row, sum)
	}
	if _, errs, code := rlmpl(t, "mcp", "list", "nowhere"); code != 2 || !strings.Contains(errs, "no [mcp.nowhere] table") {
		t.Fatalf("unknown server: %d %s", code, errs)
	}
	mcpConfig(t, "api_key = \"sk-pasted\"\n")
	if _, errs, code := rlmpl(t, "mcp", "list"); code != 2 || strings.Contains(errs, "sk-pasted") || !strings.Contains(errs, "credential") {
		t.Fatalf("a pasted key: %d %s", code, errs)
	}
}

// TestChatMCP: `rlmpl chat --direct --mcp local:echo` offers the granted
// tool (and no other of the server), the model's call reaches the server,
// the result is stored and the turn replays; /receipt names the server
// and the call; a grant of an unconfigured server, or of a tool the
// server does not list, fails before anything is written.
func TestChatMCP(t *testing.T) {
	mcpConfig(t, "")
	srv := providertest.NewServer(
		providertest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"local__echo","arguments":"{\"text\":\"from chat\"}"}}]}}]}`,
			`{"choices":[{"index":0,"finish_reason":"tool_calls","delta":{}}]}`, "[DONE]"),
		providertest.SSE(`{"choices":[{"index":0,"delta":{"content":"The server said it."}}]}`, "[DONE]"),
	)
	defer srv.Close()
	state := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"chat", "--direct", "--mcp", "local:echo", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "gpt-4o-2024-08-06"}, strings.NewReader("call the tool\n/receipt\n"), &stdout, &stderr)
	out := stdout.String()
	reqs := srv.Requests()
	if code != 0 || !strings.HasPrefix(out, "The server said it.\n") || len(reqs) != 2 {
		t.Fatalf("chat: %d, %d requests\n%s\n%s", code, len(reqs), out, stderr.String())
	}
	if !strings.Contains(reqs[0].Raw, `"name":"local__echo"`) || strings.Contains(reqs[0].Raw, "local__exit") {
		t.Fatalf("tools offered: %s", reqs[0].Raw)
	}
	if !strings.Contains(reqs[1].Raw, `"content":"echo: from chat"`) {
		t.Fatalf("the result did not reach the model: %s", reqs[1].Raw)
	}
	if !strings.Contains(out, "mcp local: echo") || !strings.Contains(out, "echo ok") {
		t.Fatalf("the receipt does not name the server and the call:\n%s", out)
	}
	shown, _, _ := rlmpl(t, "conv", "show", "demo", "--state", state)
	if !strings.Contains(shown, "echo: from chat") {
		t.Fatalf("stored:\n%s", shown)
	}
	id := out[strings.Index(out, "turn turn_")+5:]
	id = id[:strings.IndexByte(id, ' ')]
	if out, errs, code := rlmpl(t, "turn", "replay", id, "--state", state, "--conv", "demo"); code != 0 || !strings.Contains(out, "2 requests rendered again") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
	state = t.TempDir()
	_, errs, code := rlmpl(t, "chat", "--mcp", "nowhere", "--state", state, "--conv", "demo", "--provider", "local", "--base-url", srv.BaseURL())
	if code != 2 || !strings.Contains(errs, "no [mcp.nowhere] table") {
		t.Fatalf("an unconfigured server: %d %s", code, errs)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Fatalf("a failed configuration wrote %d entries", len(entries))
	}
	_, errs, code = rlmpl(t, "chat", "--mcp", "local:nosuch", "--state", state, "--conv", "demo", "--provider", "local", "--base-url", srv.BaseURL())
	if code != 1 || !strings.Contains(errs, "unknown_tool") {
		t.Fatalf("a grant of a tool the server does not list: %d %s", code, errs)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Fatalf("a grant the server refuses wrote %d entries", len(entries))
	}
}
