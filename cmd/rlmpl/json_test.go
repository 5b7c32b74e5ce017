package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// snakeKey is the one key convention of --json.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// badKeys returns the keys of v (at any depth) that are not snake_case.
func badKeys(v any) []string {
	var bad []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !snakeKey.MatchString(k) {
				bad = append(bad, k)
			}
			bad = append(bad, badKeys(x)...)
		}
	case []any:
		for _, x := range v {
			bad = append(bad, badKeys(x)...)
		}
	}
	return bad
}

// TestJSONConvention: --json on every inspection command (and chat's
// /search, /ledger and /receipt) prints JSON Lines — each line one object
// — whose keys are all snake_case; none prints a table instead.
func TestJSONConvention(t *testing.T) {
	isolate(t)
	state, dir := t.TempDir(), t.TempDir()
	transcript := filepath.Join(dir, "t.jsonl")
	os.WriteFile(transcript, []byte(`{"role":"user","content":"where is the lease protocol documented?"}`+"\n"+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_runbooks","arguments":"{\"q\":\"lease\"}"}}]}`+"\n"+
		`{"role":"tool","tool_call_id":"c1","content":"runbook 7: the lease protocol"}`+"\n"+
		`{"role":"assistant","content":"runbook 7 documents the lease protocol"}`+"\n"), 0o600)
	fields := filepath.Join(dir, "f.json")
	os.WriteFile(fields, []byte(`{"summary":"lease protocol","decisions":[],"facts":[],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[]}`), 0o600)
	ctxFile := filepath.Join(dir, "c.txt")
	os.WriteFile(ctxFile, []byte("line one\nline two about the lease\n"), 0o600)
	for _, args := range [][]string{
		{"conv", "import", "demo", transcript},
		{"warm", "publish", "--conv", "demo", "--range", "1-2", "--fields", fields},
	} {
		if _, errs, code := rlmpl(t, append(args, "--state", state)...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"lease"},"bind":"r"},{"op":"final","value":{"ref":"var","name":"r"}}]}`, 10, 5))
	defer srv.Close()
	var chatOut, chatErr bytes.Buffer
	if code := run(context.Background(), []string{"chat", "--json", "--state", state, "--conv", "demo", "--base-url", srv.BaseURL(), "--model", "tiny"},
		strings.NewReader("lease?\n/search lease\n/ledger\n/receipt\n"), &chatOut, &chatErr); code != 0 {
		t.Fatalf("chat: %d %s", code, chatErr.String())
	}
	outputs := map[string]string{"chat --json": chatOut.String()}
	for _, args := range [][]string{
		{"conv", "list"}, {"conv", "show", "demo"}, {"conv", "search", "demo", "lease"}, {"conv", "search", "demo", "lease", "--cold"},
		{"conv", "stats", "demo"}, {"receipt", "list", "--conv", "demo"}, {"warm", "list", "--conv", "demo"},
		{"warm", "show", "range_1_2", "--conv", "demo"}, {"pack", "--conv", "demo"}, {"providers"},
		{"complete", "--query", "lease?", "--context-file", ctxFile, "--base-url", srv.BaseURL(), "--model", "tiny"},
	} {
		args = append(args, "--json")
		if args[0] != "providers" && args[0] != "complete" {
			args = append(args, "--state", state)
		}
		out, errs, code := rlmpl(t, args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		outputs[strings.Join(args[:2], " ")] = out
	}
	var ids []string
	for name, out := range outputs {
		if out == "" {
			t.Errorf("%s: no output", name)
		}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Errorf("%s: not a JSON object per line: %q", name, line)
				continue
			}
			if bad := badKeys(v); len(bad) > 0 {
				t.Errorf("%s: keys %v are not snake_case: %s", name, bad, line)
			}
			if id, ok := v["turn_id"].(string); ok && name == "receipt list" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) != 1 {
		t.Fatalf("receipt list --json: %d receipts, want 1", len(ids))
	}
	if out, _, _ := rlmpl(t, "receipt", "show", ids[0], "--json", "--state", state, "--conv", "demo"); strings.Count(out, "\n") != 1 || len(badKeys(mustObject(t, out))) > 0 {
		t.Errorf("receipt show --json: %s", out)
	}
	if v := mustObject(t, outputs["complete --query"]); v["value"] == nil || strings.Contains(outputs["complete --query"], `"Index"`) {
		t.Errorf("complete --json: %s", outputs["complete --query"])
	}
}

func mustObject(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not one JSON object: %v: %s", err, s)
	}
	return v
}
