package rlmpl_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// headRE matches a clause head at the start of a line: name( or name :- or
// name. Quoted '$…' names are host-private and not matched.
var headRE = regexp.MustCompile(`^([a-z][A-Za-z0-9_]*)(\(|\s*:-|\s*\.)`)

// pldocRE matches a pldoc mode line: %!  name(...) or %!  name is det.
var pldocRE = regexp.MustCompile(`^%!\s+([a-z][A-Za-z0-9_]*)`)

// TestPublicPredicatesDocumented checks that every public predicate of the
// Prolog sources (a clause head whose name has no trailing "_") has a %!
// pldoc line.
func TestPublicPredicatesDocumented(t *testing.T) {
	files, _ := filepath.Glob("lib/*.pl")
	more, _ := filepath.Glob("prolog/*.pl")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no Prolog sources found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		documented := map[string]bool{}
		lines := strings.Split(string(b), "\n")
		for _, l := range lines {
			if m := pldocRE.FindStringSubmatch(l); m != nil {
				documented[m[1]] = true
			}
		}
		reported := map[string]bool{}
		inComment := false
		for i, l := range lines {
			// Clause heads inside block comments (the module header) are prose.
			if inComment || strings.HasPrefix(l, "/*") {
				inComment = !strings.Contains(l, "*/")
				continue
			}
			m := headRE.FindStringSubmatch(l)
			if m == nil || strings.HasSuffix(m[1], "_") || documented[m[1]] || reported[m[1]] {
				continue
			}
			reported[m[1]] = true
			t.Errorf("%s:%d: public predicate %s has no %%! pldoc line (document it, or end a private helper's name with _)", f, i+1, m[1])
		}
	}
}
