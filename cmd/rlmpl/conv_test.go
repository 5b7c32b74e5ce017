package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/store/pgtest"
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
	state := t.TempDir()
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
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 || !strings.Contains(errs, "imported 40 messages into demo") {
		t.Fatalf("import: %d %s", code, errs)
	}
	// The same file again adds nothing: its lines are keyed by file and line.
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 || !strings.Contains(errs, "imported 0 messages into demo (40 lines already there") {
		t.Fatalf("import again: %d %s", code, errs)
	}
	if out, _, _ := rlmpl(t, "conv", "list", "--state", state); !strings.Contains(out, "demo") || !strings.Contains(out, "40 messages") {
		t.Fatalf("list: %s", out)
	}
	if out, _, _ := rlmpl(t, "conv", "show", "--state", state, "--recent", "2", "demo"); !strings.HasPrefix(out, "[39] user:") {
		t.Fatalf("show: %s", out)
	}
	if out, _, _ := rlmpl(t, "conv", "search", "--state", state, "demo", "needle"); !strings.HasPrefix(out, "[4] user") {
		t.Fatalf("search: %s", out)
	}
	if out, _, _ := rlmpl(t, "conv", "search", "--state", state, "demo", "needle", "--window", "1"); !strings.HasPrefix(out, "    [3] user: filler") || !strings.Contains(out, "\n[4] user") {
		t.Fatalf("search --window: %s", out)
	}
	if out, errs, code := rlmpl(t, "conv", "search", "--cold", "--state", state, "demo", "needle"); code != 0 || !strings.Contains(out, "\n[4] user: the ancient needle is here\n[5] user: filler") || !strings.HasSuffix(out, "---\ntruncated: false\n") {
		t.Fatalf("cold search: %d %s %s", code, out, errs)
	}
	out, errs, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--max-context", "1200", "--reserve", "100", "--safety", "10", "--min-recent", "4", "--explain")
	if code != 0 || !strings.Contains(out, "managed_cold_history_boundary") || !strings.Contains(out, "left out (searchable") || !strings.Contains(out, "safety_margin") {
		t.Fatalf("pack: %d %s %s", code, out, errs)
	}
	if out, _, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--json"); code != 0 || !strings.Contains(out, `"role": "user"`) {
		t.Fatalf("pack --json: %d %s", code, out)
	}
	if _, errs, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--max-context", "50", "--reserve", "10"); code != 1 || !strings.Contains(errs, "exceed") {
		t.Fatalf("overflow: %d %s", code, errs)
	}
	// The default reserve and margin shrink with a small cap.
	if out, errs, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--max-context", "8000"); code != 0 || !strings.Contains(out, "of 8000") {
		t.Fatalf("pack --max-context 8000: %d %s %s", code, out, errs)
	}
	// Flags may follow the positional arguments.
	if out, _, code := rlmpl(t, "conv", "search", "demo", "needle", "--cold", "--state", state); code != 0 || !strings.Contains(out, "[4] user") {
		t.Fatalf("interspersed flags: %d %s", code, out)
	}
	// An absolute store directory named by the operator is granted.
	abs := filepath.Join(t.TempDir(), "elsewhere")
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "--store", abs, "demo", file); code != 0 {
		t.Fatalf("absolute store: %d %s", code, errs)
	}
	if out, _, _ := rlmpl(t, "conv", "list", "--state", state, "--store", abs); !strings.Contains(out, "40 messages") {
		t.Fatalf("absolute store list: %s", out)
	}
}

// TestPackIsByteIdenticalAcrossProcesses (I10): the same transcript and
// options render the same request, byte for byte, in two processes — no
// map order, clock or address leaks into a pack.
func TestPackIsByteIdenticalAcrossProcesses(t *testing.T) {
	state := t.TempDir()
	file := filepath.Join(t.TempDir(), "t.jsonl")
	var sb strings.Builder
	for i := range 60 {
		role := []string{"user", "assistant"}[i%2]
		fmt.Fprintf(&sb, `{"role":%q,"content":"turn %d %s"}`+"\n", role, i, strings.Repeat("lease fencing token ", 1+i%7))
	}
	os.WriteFile(file, []byte(sb.String()), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	render := func() []byte {
		cmd := exec.Command(os.Args[0], "pack", "--state", state, "--conv", "demo", "--model", "gpt-4o", "--max-context", "900", "--json")
		cmd.Env = append(os.Environ(), "RLMPL_TEST_MAIN=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pack: %v", err)
		}
		return out
	}
	a, b := render(), render()
	if !bytes.Equal(a, b) || !bytes.Contains(a, []byte("Cold history boundary")) {
		t.Fatalf("renders differ or lack the boundary:\n%s\n---\n%s", a, b)
	}
}

// TestStorePostgresURL: --store takes a postgres:// URL; what one command
// imports, the next reads, with no state directory involved.
func TestStorePostgresURL(t *testing.T) {
	url := pgtest.DSN(t)
	file := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(file, []byte(`{"role":"user","content":"kept in postgres"}`+"\n"+`{"role":"assistant","content":"noted"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := rlmpl(t, "conv", "import", "--store", url, "pg", file); code != 0 || !strings.Contains(errs, "imported 2 messages into pg") {
		t.Fatalf("import: %d %s", code, errs)
	}
	if out, errs, code := rlmpl(t, "conv", "list", "--store", url); code != 0 || !strings.Contains(out, "pg") || !strings.Contains(out, "2 messages") {
		t.Fatalf("list: %d %s %s", code, out, errs)
	}
	if out, _, _ := rlmpl(t, "conv", "show", "pg", "--store", url); !strings.HasPrefix(out, "[1] user: kept in postgres") {
		t.Fatalf("show: %s", out)
	}
	if out, _, _ := rlmpl(t, "help"); !strings.Contains(out, "--store names one (a name under it, an absolute directory, or a\npostgres:// URL") {
		t.Errorf("help does not say --store takes a postgres:// URL:\n%s", out)
	}
}
