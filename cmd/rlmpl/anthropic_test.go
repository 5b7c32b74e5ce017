package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestChatAnthropic: `rlmpl chat --provider anthropic --base-url URL`
// against a scripted Messages API server: planner turns whose model step
// streams, then a direct turn with a tool round. Every request goes to
// /v1/messages with the preset's key as x-api-key; the receipt names the
// dialect and holds the SHA-256 of each body received, the cache it read
// and wrote, and `rlmpl turn replay` renders every request again.
func TestChatAnthropic(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
	planner := `{"steps":[{"op":"model","provider":"anthropic","prompt":{"ref":"input","name":"query"},"bind":"a"},{"op":"final","value":{"ref":"var","name":"a"}}]}`
	a := providertest.NewAnthropic(providertest.AnthropicOptions{MinCacheTokens: 256, Reply: func(call int, body map[string]any) providertest.AnthropicReply {
		switch {
		case call < 4 && call%2 == 0:
			return providertest.AnthropicReply{Text: planner}
		case call < 4:
			return providertest.AnthropicReply{Text: "Hello there"}
		case call == 4:
			return providertest.AnthropicReply{ToolUses: []providertest.ToolUse{{ID: "toolu_1", Name: "history_search", Input: `{"query":"hi"}`}}}
		}
		return providertest.AnthropicReply{Text: "Found it"}
	}})
	srv := providertest.NewServer(a.ServeHTTP)
	defer srv.Close()
	state := t.TempDir()
	chat := func(input string, flags ...string) string {
		var stdout, stderr bytes.Buffer
		args := append([]string{"chat", "--state", state, "--conv", "demo", "--provider", "anthropic", "--base-url", srv.BaseURL(),
			"--window", "stable", "--max-context", "16000"}, flags...)
		if code := run(context.Background(), args, strings.NewReader(input), &stdout, &stderr); code != 0 {
			t.Fatalf("chat %v: %d\n%s\n%s", flags, code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	out := chat("hi\nand again\n/receipt\n")
	if !strings.HasPrefix(out, "Hello there\nHello there\n") || !strings.Contains(out, "planner (anthropic)") ||
		!strings.Contains(out, "written to it") {
		t.Fatalf("planner turns:\n%s", out)
	}
	out += chat("find it\n/receipt\n", "--direct")
	if !strings.Contains(out, "Found it\n") || !strings.Contains(out, "respond (anthropic)") {
		t.Fatalf("direct turn:\n%s", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "sk-ant-test-key" || r.Body["model"] != "claude-sonnet-4-5" {
			t.Errorf("request %d to %s, key %q: %.200s", i, r.Path, r.Header.Get("X-Api-Key"), r.Raw)
		}
		// Each /receipt shows the last turn: the second planner turn's
		// calls (requests 2 and 3), the direct turn's (4 and 5).
		if sum := sha256.Sum256([]byte(r.Raw)); i >= 2 && !strings.Contains(out, hex.EncodeToString(sum[:])) {
			t.Errorf("request %d: its SHA-256 is not in the receipt", i)
		}
	}
	if !strings.Contains(reqs[5].Raw, `"type":"tool_result","tool_use_id":"toolu_1"`) {
		t.Fatalf("the direct turn's second round: %s", reqs[5].Raw)
	}
	rs, _, code := rlmpl(t, "receipt", "list", "--state", state, "--conv", "demo", "--json")
	if code != 0 {
		t.Fatalf("receipt list: %d", code)
	}
	for _, line := range strings.Split(strings.TrimSpace(rs), "\n") {
		id := line[strings.Index(line, `"turn_id":"`)+11:]
		id = id[:strings.IndexByte(id, '"')]
		if out, errs, code := rlmpl(t, "turn", "replay", id, "--state", state, "--conv", "demo"); code != 0 || !strings.Contains(out, "rendered again") {
			t.Fatalf("replay %s: %d %s %s", id, code, out, errs)
		}
	}
}
