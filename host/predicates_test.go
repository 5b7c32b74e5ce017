package host

import (
	"context"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/lib"
)

// exportRE matches an entry of a lib file's Exports table.
var exportRE = regexp.MustCompile(`(?m)^    ([a-z][a-z0-9_]*)/(\d+)\s+%`)

// TestPublicPredicatesMatchTheirDocs: every public predicate registered in
// Go has its mode string, verbatim, as a %! pldoc line in lib/, and every
// predicate a lib file exports is defined — in Go or in Prolog.
func TestPublicPredicatesMatchTheirDocs(t *testing.T) {
	var docs strings.Builder
	exports := map[string]string{} // name/arity → file
	err := fs.WalkDir(lib.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".pl") {
			return err
		}
		b, err := fs.ReadFile(lib.FS, path)
		docs.Write(b)
		table := string(b)
		if i := strings.Index(table, "\nExports:\n"); i >= 0 {
			table = table[i:]
			if j := strings.Index(table[1:], "\n\n"); j >= 0 {
				table = table[:j+1]
			}
		} else {
			table = ""
		}
		for _, m := range exportRE.FindAllStringSubmatch(table, -1) {
			exports[m[1]+"/"+m[2]] = path
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(exports) < 20 {
		t.Fatalf("read %d exports from lib's Exports tables; the parser lost them", len(exports))
	}
	s := internalSession(t)
	registered := map[string]bool{}
	for _, d := range s.predicates() {
		registered[d.Indicator()] = true
		if strings.HasPrefix(d.Name, "$") || strings.HasSuffix(d.Name, "_") {
			continue
		}
		if !strings.Contains(docs.String(), "%!  "+d.Mode+".\n") {
			t.Errorf("%s: no pldoc line %q in lib/ (the mode in predicates.go and the doc must agree)", d.Indicator(), "%!  "+d.Mode+".")
		}
	}
	for pi, file := range exports {
		if registered[pi] {
			continue
		}
		if _, err := s.Once(context.Background(), "current_predicate("+pi+")"); err != nil {
			t.Errorf("%s exports %s, which is neither registered in Go nor defined in lib/", file, pi)
		}
	}
}

// internalSession is a session with lib loaded, closed with the test.
func internalSession(t *testing.T) *Session {
	h, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
