package rlmpl_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryTarget: `make fuzz` (and so CI) names every fuzz
// target in the tree, so a new one cannot be left out silently.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
			pkg := "./" + filepath.Dir(path)
			want := pkg + " -run '^$$' -fuzz '^" + string(m[1]) + "$$'"
			if !strings.Contains(string(mk), want) {
				t.Errorf("%s: %s is not fuzzed by `make fuzz`; add to the Makefile:\n\t$(GO) test %s -fuzztime $(FUZZTIME)", path, m[1], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
