package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the pages whose examples run: the README and every page of
// docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ has no pages")
	}
	return append([]string{"../../README.md"}, pages...)
}

// TestREADMEExamples runs the examples of the README and of docs/ so they
// cannot drift. In each page, a ```prolog block whose first line is
// "% NAME.pl" is written to a scratch directory of the page's, and every
// "$ bin/rlmpl ..." line of a ```console block is run in-process (with a
// fresh state directory per page), its output compared line by line with
// the lines that follow it. "printf 'X' | bin/rlmpl ..." feeds X (with \n
// escapes) as standard input.
func TestREADMEExamples(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	ran := 0
	for _, page := range docFiles(t) {
		name, _ := filepath.Rel(repo, filepath.Join(repo, "cmd/rlmpl", page))
		t.Run(name, func(t *testing.T) {
			ran += runPageExamples(t, page, repo)
		})
	}
	if ran == 0 {
		t.Fatal("the README and docs/ have no console examples")
	}
}

// runPageExamples runs one page's console examples and returns how many
// commands it ran.
func runPageExamples(t *testing.T, page, repo string) int {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
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
				t.Fatalf("command %q does not run bin/rlmpl", cmd)
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
				t.Errorf("$ %s\ngot:\n%s\nwant:\n%s", cmd, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			ran++
		}
	}
	return ran
}

// TestDocLinks checks that every relative link of the README and docs/
// names a file that exists and, with a #fragment, a heading of that file
// (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range docFiles(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if frag != "" && !hasAnchor(string(body), frag) {
				t.Errorf("%s: link %q: %s has no heading with that anchor", page, target, file)
			}
		}
	}
}

// hasAnchor reports whether markdown has a heading whose GitHub anchor is
// frag.
func hasAnchor(markdown, frag string) bool {
	for line := range strings.SplitSeq(markdown, "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		if b.String() == frag {
			return true
		}
	}
	return false
}
