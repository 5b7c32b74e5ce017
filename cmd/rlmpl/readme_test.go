package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEExamples runs the README's examples so they cannot drift: a
// ```prolog block whose first line is "% NAME.pl" is written to a scratch
// directory, and every "$ bin/rlmpl ..." line of a ```console block is run
// in-process (with a fresh state directory), its output compared line by
// line with the lines that follow it. "printf 'X' | bin/rlmpl ..." feeds X
// (with \n escapes) as standard input.
func TestREADMEExamples(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	repo, _ := filepath.Abs("../..")
	blocks := regexp.MustCompile("(?s)```(prolog|console)\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	ran := 0
	for _, blk := range blocks {
		lines := strings.Split(strings.TrimSuffix(blk[2], "\n"), "\n")
		if blk[1] == "prolog" {
			if name, ok := strings.CutPrefix(lines[0], "% "); ok && strings.HasSuffix(name, ".pl") {
				os.WriteFile(filepath.Join(dir, name), []byte(blk[2]), 0o600)
			}
			continue
		}
		for i := 0; i < len(lines); i++ {
			cmd, ok := strings.CutPrefix(lines[i], "$ ")
			if !ok {
				t.Fatalf("console block: %q is neither a $ command nor the output of one", lines[i])
			}
			var want []string
			for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "$ ") {
				i++
				want = append(want, lines[i])
			}
			stdin := ""
			if m := regexp.MustCompile(`^printf '([^']*)' \| (.*)$`).FindStringSubmatch(cmd); m != nil {
				stdin, cmd = strings.ReplaceAll(m[1], `\n`, "\n"), m[2]
			}
			args := strings.Fields(cmd)
			if args[0] != "bin/rlmpl" {
				t.Fatalf("README command %q does not run bin/rlmpl", cmd)
			}
			for j, a := range args {
				switch {
				case strings.HasPrefix(a, "examples/"):
					args[j] = filepath.Join(repo, a)
				case strings.HasSuffix(a, ".pl"):
					args[j] = filepath.Join(dir, a)
				}
			}
			var stdout, stderr bytes.Buffer
			run(context.Background(), args[1:], strings.NewReader(stdin), &stdout, &stderr)
			got := strings.Split(strings.TrimSuffix(stdout.String()+stderr.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("README: $ %s\ngot:\n%s\nwant:\n%s", cmd, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("the README has no console examples")
	}
}
