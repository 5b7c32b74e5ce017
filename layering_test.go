package rlmpl_test

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rlmpl/rlmpl"

// allowed lists, per project package, the project packages its non-test code
// may import (DESIGN.md §2): cmd/rlmpl → host → {prolog, lib, store, solver,
// tokenizer}; the leaves import nothing of the project.
var allowed = map[string][]string{
	"prolog":    {},
	"lib":       {},
	"solver":    {},
	"store":     {},
	"tokenizer": {},
	"host":      {"prolog", "lib", "store", "solver", "tokenizer"},
	"cmd/rlmpl": {"*"},
}

// why explains each rule in the failure message.
var why = map[string]string{
	"prolog":    "prolog is generic embedding glue and must not know conversations, storage or providers",
	"lib":       "lib holds only embedded Prolog sources",
	"solver":    "solver must stay Prolog-free and storage-free (pure optimization over gini)",
	"store":     "store stores bytes and must not know Prolog terms",
	"tokenizer": "tokenizer must not know Prolog or do I/O",
	"host":      "host may use only the leaf packages",
}

// TestForbiddenImports enforces the dependency direction and that only
// prolog/ imports ichiban's root package.
func TestForbiddenImports(t *testing.T) {
	root, _ := os.Getwd()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		top := rel
		if strings.HasPrefix(rel, "host/") {
			top = "host" // sub-packages of host share its rules
		}
		for _, imp := range pkg.Imports {
			if imp == "github.com/ichiban/prolog" && rel != "prolog" {
				t.Errorf("%s imports github.com/ichiban/prolog; only prolog/ may (use prolog.New, or engine types for predicate signatures)", rel)
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(dep, "host/") && top == "host" {
				continue
			}
			rules, known := allowed[top]
			if !known {
				if rel != "." {
					t.Errorf("%s is not in the layering table; add it to allowed in layering_test.go and to ARCHITECTURE.md", rel)
				}
				continue
			}
			if slices.Contains(rules, "*") || slices.Contains(rules, dep) {
				continue
			}
			t.Errorf("%s imports %s; %s", rel, imp, why[top])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
