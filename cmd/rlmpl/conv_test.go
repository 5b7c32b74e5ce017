package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	if out, _, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--json"); code != 0 || !strings.Contains(out, `"role":"user"`) {
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

// TestReadableTranscripts: conv show and conv search print what each
// message holds — the author's name, images by their caption, an
// assistant's tool calls, the call a tool result answers — and search
// hits with their scores.
func TestReadableTranscripts(t *testing.T) {
	state := t.TempDir()
	file := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(file, []byte(`{"role":"user","name":"alice","content":[{"type":"text","text":"what does the lease dashboard show?"},{"type":"image_url","image_url":{"url":"https://x/y.png"},"alt":"a red graph"},{"type":"image_url","image_url":{"url":"https://x/z.png"}}]}
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_runbooks","arguments":"{\"q\":\"lease\"}"}}]}
{"role":"tool","tool_call_id":"c1","content":"runbook 7: the lease protocol"}
{"role":"assistant","content":"runbook 7 documents it"}
`), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	want := `[1] user (alice): what does the lease dashboard show?
    [image: a red graph]
    [image]
[2] assistant: → tool search_runbooks({"q":"lease"}) [c1]
[3] tool [c1]: runbook 7: the lease protocol
[4] assistant: runbook 7 documents it
`
	if out, errs, _ := rlmpl(t, "conv", "show", "--state", state, "demo"); out != want {
		t.Fatalf("conv show:\n%s%s\nwant\n%s", out, errs, want)
	}
	out, _, _ := rlmpl(t, "conv", "search", "--state", state, "demo", "search_runbooks")
	if !regexp.MustCompile(`^\[2\] assistant \(score \d\.\d{3}\): → tool search_runbooks\(\{"q":"lease"\}\) \[c1\]\n`).MatchString(out) {
		t.Fatalf("conv search:\n%s", out)
	}
	if out, _, _ := rlmpl(t, "conv", "search", "--state", state, "demo", "red graph"); !strings.HasPrefix(out, "[1] user (alice) (score ") || !strings.Contains(out, "\n    [image: a red graph]\n") {
		t.Fatalf("conv search by caption:\n%s", out)
	}
}

// TestSearchSaysWhenAMessageWasCut: a hit whose message is longer than
// ranked search reads (its first MiB) says so, in text and in JSON.
func TestSearchSaysWhenAMessageWasCut(t *testing.T) {
	state := t.TempDir()
	file := filepath.Join(t.TempDir(), "t.jsonl")
	long := "early " + strings.Repeat("filler ", 1<<20/7) + " late"
	os.WriteFile(file, []byte(`{"role":"user","content":"`+long+`"}`+"\n"+`{"role":"user","content":"early and short"}`+"\n"), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	out, _, _ := rlmpl(t, "conv", "search", "--state", state, "demo", "early")
	for _, l := range strings.Split(out, "\n") {
		if cut := strings.Contains(l, "only its first MiB searched"); strings.HasPrefix(l, "[") && cut != strings.HasPrefix(l, "[1]") {
			t.Errorf("conv search: %.120s", l)
		}
	}
	out, _, _ = rlmpl(t, "conv", "search", "--state", state, "demo", "early", "--json")
	if strings.Count(out, `"partial":true`) != 1 {
		t.Errorf("conv search --json: %d hits marked partial, want 1", strings.Count(out, `"partial":true`))
	}
}

// TestImportRefusesOrphanToolResults: a transcript whose tool result
// answers no call fails to import and stores nothing; --lenient stores it
// as it is, and the pack leaves the orphan out and says so.
func TestImportRefusesOrphanToolResults(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "o.jsonl")
	os.WriteFile(file, []byte(`{"role":"user","content":"look it up"}
{"role":"tool","tool_call_id":"call_gone","content":"42"}
{"role":"assistant","content":"it is 42"}
`), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 1 || !strings.Contains(errs, "line 2") || !strings.Contains(errs, "tool result") {
		t.Fatalf("import: %d %s", code, errs)
	}
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file, "--lenient"); code != 0 || !strings.Contains(errs, "imported 3 messages") {
		t.Fatalf("lenient import: %d %s", code, errs)
	}
	out, errs, code := rlmpl(t, "pack", "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "message 2 left out: orphan_tool_result") || strings.Contains(out, "conversation_message_2 ") {
		t.Fatalf("pack: %d %s %s", code, out, errs)
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

// TestImportIsAllOrNothing: a file that fails at any line (bad JSON, an
// unknown role, invalid UTF-8, an orphan tool result) imports nothing,
// not even the conversation it would have created, and says so.
func TestImportIsAllOrNothing(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	first := `{"role":"user","content":"kept?"}` + "\n"
	for i, bad := range []string{
		`{"role":"user",`,
		`{"role":"robot","content":"x"}`,
		`{"role":"user","content":"caf` + "\xE9" + `"}`,
		`{"role":"tool","tool_call_id":"call_gone","content":"42"}`,
	} {
		file := filepath.Join(dir, fmt.Sprintf("bad%d.jsonl", i))
		os.WriteFile(file, []byte(first+bad+"\n"), 0o600)
		_, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file)
		if code != 1 || !strings.Contains(errs, "line 2") || !strings.Contains(errs, "nothing was imported") || strings.Contains(errs, "imported 0") {
			t.Errorf("import of %s: %d %s", bad, code, errs)
		}
		if out, errs, code := rlmpl(t, "conv", "list", "--state", state); code != 0 || out != "" {
			t.Errorf("after a failed import of %s, conv list: %d %q %s", bad, code, out, errs)
		}
	}
}

// TestPostgresReadOnlyCommandsCreateNothing: against a schema with no
// store, the commands that only read say "store not found" and leave the
// schema empty, as they do for a directory; conv import then creates the
// store and they read it.
func TestPostgresReadOnlyCommandsCreateNothing(t *testing.T) {
	url := pgtest.DSN(t)
	for _, args := range [][]string{
		{"conv", "list"},
		{"conv", "show", "pg"},
		{"conv", "export", "pg"},
		{"receipt", "list", "--conv", "pg"},
		{"receipt", "stats", "--conv", "pg"},
		{"pack", "--conv", "pg"},
		{"warm", "list", "--conv", "pg"},
	} {
		if _, errs, code := rlmpl(t, append(args, "--store", url)...); code != 1 || !strings.Contains(errs, "store not found") || !strings.Contains(errs, "conv import and chat create it") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and store not found", args, code, errs)
		}
	}
	if out, errs, code := rlmpl(t, "store", "status", "--store", url); code != 0 || !strings.Contains(out, ", role "+pgtest.Scalar(t, url, "SELECT current_user")+"\n") {
		t.Errorf("store status: %d %s %s", code, out, errs)
	}
	if n := pgtest.Scalar(t, url, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"); n != "0" {
		t.Fatalf("the read-only commands created %s tables", n)
	}
	file := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(file, []byte(`{"role":"user","content":"hello"}`+"\n"), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--store", url, "pg", file); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	if out, errs, code := rlmpl(t, "conv", "list", "--store", url); code != 0 || !strings.HasPrefix(out, "pg\t") {
		t.Fatalf("conv list after the import: %d %q %s", code, out, errs)
	}
}

// TestPostgresWithoutASchema: a search_path naming no schema makes conv
// list, conv import and chat say what to do (create the schema, grant it,
// name it) instead of a raw SQLSTATE.
func TestPostgresWithoutASchema(t *testing.T) {
	pgtest.Require(t)
	url := pgtest.WithSearchPath(pgtest.BaseDSN(), "rlmpl_i35_no_such_schema")
	file := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(file, []byte(`{"role":"user","content":"hello"}`+"\n"), 0o600)
	for _, args := range [][]string{
		{"conv", "list", "--store", url},
		{"conv", "import", "--store", url, "pg", file},
		{"chat", "--store", url, "--conv", "pg", "--base-url", "http://127.0.0.1:9/v1"},
	} {
		_, errs, code := rlmpl(t, args...)
		if code != 1 || !strings.Contains(errs, "no usable PostgreSQL schema") || !strings.Contains(errs, "CREATE SCHEMA") ||
			!strings.Contains(errs, "search_path=") || strings.Contains(errs, "SQLSTATE") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}
