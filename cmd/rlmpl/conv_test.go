package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func rlmpl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// TestConvAndPackCommands: import a transcript, inspect it, search it
// ranked and through the cold handle, and explain its pack.
func TestConvAndPackCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	file := filepath.Join(t.TempDir(), "t.jsonl")
	var sb strings.Builder
	for i := range 40 {
		if i == 3 {
			sb.WriteString(`{"role":"user","content":"the ancient needle is here"}` + "\n")
			continue
		}
		sb.WriteString(`{"role":"user","content":"filler message number ` + strings.Repeat("word ", 30) + `"}` + "\n")
	}
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := rlmpl(t, "conv", "import", "--store", dir, "demo", file); code != 0 || !strings.Contains(errs, "imported 40 messages into demo") {
		t.Fatalf("import: %d %s", code, errs)
	}
	if out, _, _ := rlmpl(t, "conv", "list", "--store", dir); !strings.Contains(out, "demo") || !strings.Contains(out, "40 messages") {
		t.Fatalf("list: %s", out)
	}
	if out, _, _ := rlmpl(t, "conv", "show", "--store", dir, "--recent", "2", "demo"); !strings.HasPrefix(out, "[39] user:") {
		t.Fatalf("show: %s", out)
	}
	if out, _, _ := rlmpl(t, "conv", "search", "--store", dir, "demo", "needle"); !strings.HasPrefix(out, "[4] user") {
		t.Fatalf("search: %s", out)
	}
	if out, errs, code := rlmpl(t, "conv", "search", "--cold", "--store", dir, "demo", "needle"); code != 0 || !strings.Contains(out, "[4] user: the ancient needle is here\ntruncated: false") {
		t.Fatalf("cold search: %d %s %s", code, out, errs)
	}
	out, errs, code := rlmpl(t, "pack", "--store", dir, "--conv", "demo", "--max-context", "1200", "--reserve", "100", "--safety", "10", "--min-recent", "4", "--explain")
	if code != 0 || !strings.Contains(out, "managed_cold_history_boundary") || !strings.Contains(out, "left out (searchable") || !strings.Contains(out, "safety_margin") {
		t.Fatalf("pack: %d %s %s", code, out, errs)
	}
	if out, _, code := rlmpl(t, "pack", "--store", dir, "--conv", "demo", "--json"); code != 0 || !strings.Contains(out, `"role": "user"`) {
		t.Fatalf("pack --json: %d %s", code, out)
	}
	if _, errs, code := rlmpl(t, "pack", "--store", dir, "--conv", "demo", "--max-context", "50", "--reserve", "10"); code != 1 || !strings.Contains(errs, "exceeds") {
		t.Fatalf("overflow: %d %s", code, errs)
	}
}
