package prolog

import (
	"strings"
	"testing"

	"github.com/ichiban/prolog/engine"
)

// FuzzReader feeds arbitrary text to the host's reader and ichiban's parser
// the way Consult does before anything runs: no input may panic, and every
// syntax error must carry a position inside the text.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"p(1).\n", "a :- b, c.\n", "x('a – b').\n", "q(0'a, 0''', 0'\\n).\n",
		"/* c */ r(\"s\\\"t\").\n", "% c\ns(X) :- X =.. [f|_].\n", "t('''').", "u(1.5e3).\n",
		"v('unterminated", "w(/*", "\xff\xfe.", "0'", "'\\", "x(`b`).",
	} {
		f.Add(s)
	}
	in := New(nil)
	f.Fuzz(func(t *testing.T, src string) {
		s, err := scan(src)
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("scan error %T %v", err, err)
			}
			if se.Pos.Line < 1 || se.Pos.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("position %v outside text", se.Pos)
			}
			return
		}
		for _, cl := range s.clauses {
			if cl.start < 0 || cl.end > len(s.text) || cl.start > cl.end {
				t.Fatalf("clause span %v outside text of %d bytes", cl, len(s.text))
			}
			p := engine.NewParser(&in.ip.VM, &countingReader{s: s.text[cl.start:cl.end]})
			_, _ = p.Term()
		}
		if se := in.locate(s, "f.pl"); se != nil && (se.Pos.Line < 1 || se.Pos.Line > strings.Count(src, "\n")+1) {
			t.Fatalf("position %v outside text", se.Pos)
		}
	})
}
