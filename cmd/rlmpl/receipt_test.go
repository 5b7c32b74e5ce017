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
