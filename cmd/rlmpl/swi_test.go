package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestREPLAgreesWithSWI feeds the input of each case of
// testdata/cli/repl_swi.txt to SWI-Prolog's top level (swipl -q, piped)
// and compares what it prints on standard output with what the case says
// rlmpl prints (TestCLI checks rlmpl against the same text). Only
// standard output is compared (the blank lines at its end aside): error
// messages are worded differently. The
// test is skipped where swipl is not installed (apt-get install
// swi-prolog-nox); a case whose first line is "# not SWI" is rlmpl's only.
func TestREPLAgreesWithSWI(t *testing.T) {
	swipl, err := exec.LookPath("swipl")
	if err != nil {
		t.Skip("swipl is not installed")
	}
	path := filepath.Join("../../testdata/cli", "repl_swi.txt")
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		if len(d.CmdArgs) < 1 || d.CmdArgs[0].Key != "repl" {
			t.Fatalf("%s: want rlmpl repl", d.Pos)
		}
		cmd := exec.Command(swipl, "-q", "--no-packs", "-f", "none")
		cmd.Dir = "../../testdata/cli"
		for _, a := range d.CmdArgs[1:] {
			cmd.Args = append(cmd.Args, a.Key) // files to consult, as rlmpl repl FILE...
		}
		cmd.Stdin = strings.NewReader(d.Input + "\n")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			t.Logf("%s: swipl: %v", d.Pos, err)
		}
		var want strings.Builder
		for _, l := range strings.SplitAfter(d.Expected, "\n") {
			if !strings.HasPrefix(l, "stderr: ") && !strings.HasPrefix(l, "exit=") {
				want.WriteString(l)
			}
		}
		// SWI-Prolog ends its output with a newline at the end of input.
		if got := stdout.String(); strings.TrimRight(got, "\n") != strings.TrimRight(want.String(), "\n") {
			t.Errorf("%s: for\n%s\nSWI-Prolog prints\n%s\nrlmpl (the case) prints\n%s", d.Pos, d.Input, got, want.String())
		}
		return d.Expected
	})
}
