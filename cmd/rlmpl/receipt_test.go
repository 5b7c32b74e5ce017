package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestFailedTurnReceiptListsItsAttempts: a turn whose planner call fails
// after two retries leaves a failed receipt with the three requests sent;
// `receipt show` names each failed attempt and `turn replay` renders all
// three again from the store.
func TestFailedTurnReceiptListsItsAttempts(t *testing.T) {
	srv := providertest.NewServer(providertest.Reply(503, `{"error":{"message":"overloaded"}}`))
	defer srv.Close()
	state := t.TempDir()
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"chat", "--json", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader("hello\n"), &stdout, &stderr)
	var id string
	for _, l := range strings.Split(stdout.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil && e["event"] == "failed" {
			id = e["turn_id"].(string)
		}
	}
	if id == "" || len(srv.Requests()) != 3 {
		t.Fatalf("no failed turn after %d requests:\n%s\n%s", len(srv.Requests()), stdout.String(), stderr.String())
	}
	out, _, code := rlmpl(t, "receipt", "show", id, "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "planner #3 failed (503)") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	out, errs, code := rlmpl(t, "turn", "replay", id, "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "3 requests rendered again from the store, byte for byte") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
}

// TestReceiptListPages: `receipt list` gives a page with --limit and the
// next with --after (the user sequence of the page's last turn).
func TestReceiptListPages(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"chat", "--json", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader("first\nsecond\nthird\n"), &stdout, &stderr); code != 0 {
		t.Fatalf("chat: %s", stderr.String())
	}
	rows := func(args ...string) []string {
		out, errs, code := rlmpl(t, append([]string{"receipt", "list", "--state", state, "--conv", "demo"}, args...)...)
		if code != 0 {
			t.Fatalf("list %v: %d %s", args, code, errs)
		}
		var msgs []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			msgs = append(msgs, strings.Fields(l)[3])
		}
		return msgs
	}
	if got := strings.Join(rows("--limit", "2"), " "); got != "1→2 3→4" {
		t.Errorf("first page: %s", got)
	}
	if got := strings.Join(rows("--after", "3"), " "); got != "5→6" {
		t.Errorf("after 3: %s", got)
	}
}
