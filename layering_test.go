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

// prologFree lists the packages under host/ (with their sub-packages) that
// must import neither prolog nor ichiban, with the fix-it for each: they
// take and return Go values, and the host's adapters convert terms. They
// may import, of the project, the leaves that know no Prolog and each
// other, never prolog, host or an adapter package such as host/planterm.
var prologFree = map[string]string{
	"host/plan":     "host/plan must stay Prolog-free: take terms through plan.TermReader and plan.Term trees; convert in host/planterm",
	"host/pack":     "host/pack must stay Prolog-free: decode terms in the host adapter (host/pred_*.go) and pass Go values",
	"host/handle":   "host/handle must stay Prolog-free: decode terms in the host adapter (host/pred_context.go) and pass Go values",
	"host/provider": "host/provider must stay Prolog-free: it sends tokenizer.Request values; the host converts terms",
	"host/runtime":  "host/runtime must stay Prolog-free: it is the typed Go API under the predicates; adapters decode terms and call it",
	"host/mcp":      "host/mcp must stay Prolog-free: it is the MCP client; the host decodes grants and server options and passes Go values",
}

// prologFreeDeps are the project packages a Prolog-free host package may
// import besides the other Prolog-free ones.
var prologFreeDeps = []string{"tokenizer", "store", "solver", "lib"}

// prologFreeRule returns the fix-it of the Prolog-free rule covering rel,
// or "".
func prologFreeRule(rel string) string {
	for p, fix := range prologFree {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return fix
		}
	}
	return ""
}

// TestForbiddenImports enforces the dependency direction, that only
// prolog/ imports ichiban's root package, and that the Prolog-free packages
// under host/ stay so. It reads non-test imports: tests may use the
// host's adapters.
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
		free := prologFreeRule(rel)
		for _, imp := range pkg.Imports {
			if imp == "github.com/ichiban/prolog" && rel != "prolog" {
				t.Errorf("%s imports github.com/ichiban/prolog; only prolog/ may (use prolog.New, or engine types for predicate signatures)", rel)
			}
			dep, ours := strings.CutPrefix(imp, module+"/")
			if free != "" {
				switch {
				case strings.HasPrefix(imp, "github.com/ichiban/prolog"):
					t.Errorf("%s imports %s; %s", rel, imp, free)
				case ours && !slices.Contains(prologFreeDeps, dep) && prologFreeRule(dep) == "":
					t.Errorf("%s imports %s; %s", rel, imp, free)
				}
			}
			if !ours {
				continue
			}
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
