package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestCLI runs the datadriven scripts of testdata/cli in-process. Each case
// is `rlmpl ARGS...`, optional stdin lines, ----, then stdout, stderr lines
// prefixed "stderr: " and exit=N. Paths are relative to testdata/cli.
//
// Regenerate with `go test ./cmd/rlmpl -rewrite`; review the diff: a
// rewrite accepts whatever the code now prints.
func TestCLI(t *testing.T) {
	datadriven.Walk(t, "../../testdata/cli", func(t *testing.T, path string) {
		if !strings.HasSuffix(path, ".txt") {
			return
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "rlmpl" {
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			}
			var args []string
			for _, a := range d.CmdArgs {
				args = append(args, a.String())
			}
			for i, a := range args {
				if strings.HasPrefix(a, "scripts/") {
					args[i] = "../../testdata/cli/" + a
				}
			}
			var stdout, stderr bytes.Buffer
			stdin := ""
			if d.Input != "" {
				stdin = d.Input + "\n"
			}
			code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
			out := strings.ReplaceAll(stdout.String(), "../../testdata/cli/", "")
			var sb strings.Builder
			sb.WriteString(out)
			if out != "" && !strings.HasSuffix(out, "\n") {
				sb.WriteString("\n")
			}
			errText := strings.ReplaceAll(stderr.String(), "../../testdata/cli/", "")
			for _, l := range strings.Split(strings.TrimSuffix(errText, "\n"), "\n") {
				if errText != "" {
					sb.WriteString("stderr: " + l + "\n")
				}
			}
			fmt.Fprintf(&sb, "exit=%d\n", code)
			return sb.String()
		})
	})
}

// TestHelpSpellings: every spelling of help prints the same usage.
func TestHelpSpellings(t *testing.T) {
	var want bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, strings.NewReader(""), &want, &bytes.Buffer{}); code != 0 || want.Len() == 0 {
		t.Fatalf("--help: exit %d, %q", code, want.String())
	}
	for _, arg := range []string{"-h", "-help", "help"} {
		var out bytes.Buffer
		if code := run(context.Background(), []string{arg}, strings.NewReader(""), &out, &bytes.Buffer{}); code != 0 || out.String() != want.String() {
			t.Errorf("%s: exit %d, output differs from --help", arg, code)
		}
	}
}

// TestRunStoreFlags: --state says where persist(Name) stores live, and a
// directory outside it opens only when --grant names it.
func TestRunStoreFlags(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.pl")
	if err := os.WriteFile(script, []byte(`:- initialization(main, main).
main :- current_prolog_flag(argv, [_, Dir]),
    conversation_store_open(persist(demo), R1), print(R1), nl,
    conversation_store_open(persist(Dir), R2), print(R2), nl.
`), 0o600); err != nil {
		t.Fatal(err)
	}
	state, granted := filepath.Join(dir, "state"), filepath.Join(dir, "granted")
	out, errs, code := rlmpl(t, "run", "--state", state, script, filepath.Join(granted, "x"))
	if code != 0 || !strings.HasPrefix(out, "ok(conversation_store(") || !strings.Contains(out, "store_path_not_granted") {
		t.Fatalf("without --grant: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(state, "demo")); err != nil {
		t.Fatalf("persist(demo) not under --state: %v", err)
	}
	out, errs, code = rlmpl(t, "run", "--state", state, "--grant", granted, script, filepath.Join(granted, "x"))
	if code != 0 || strings.Contains(out, "error(") {
		t.Fatalf("with --grant: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(granted, "x")); err != nil {
		t.Fatalf("granted store not created: %v", err)
	}
}
