package prolog

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestReadTerm(t *testing.T) {
	writer := New(nil)
	for _, tc := range []struct {
		name, text, want string // want: writeq of the term, or "error: <substring>"
	}{
		{"plan", `plan([context(input(context), search("needle"), r), final(var(r))])`,
			`plan([context(input(context),search("needle"),r),final(var(r))])`},
		{"full stop optional", "foo(1).", "foo(1)"},
		{"trailing layout", "foo(1)  \n", "foo(1)"},
		{"trailing comment", "foo(1) % done", "foo(1)"},
		{"operators standard", "a-b", "a-b"},
		{"non-ascii atom", "'café'", "café"},
		{"non-ascii string", `s("naïve — ok")`, `s("naïve — ok")`},
		{"symbol end", "f(=..)", "f(=..)"},
		{"variable", "foo(X)", "error: variables are not allowed (found X)"},
		{"anonymous variable", "foo(_)", "error: variables are not allowed"},
		{"two terms", "a. b.", "error: expected exactly one term"},
		{"open list", "[*", "error: "},
		{"open term", "plan([final(", "error: "},
		{"unterminated string", `final("abc`, "error: unterminated quoted string"},
		{"empty", "  ", "error: empty text"},
		{"deep brackets", strings.Repeat("[", 100) + strings.Repeat("]", 100), "error: nesting deeper"},
		{"deep operators", strings.Repeat("- ", 70) + "a", "error: term nested deeper"},
		{"too many terms", "[" + strings.Repeat("a,", 200) + "a]", "error: more than 100 subterms"},
		{"too long", strings.Repeat("a", 70000), "error: more than the limit"},
		{"op directive is data", ":- op(200, xfx, foo)", ":-op(200,xfx,foo)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := ReadLimits{}
			if tc.name == "too many terms" {
				lim.MaxTerms = 100
			}
			term, err := ReadTerm(tc.text, lim)
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				var re *ReadError
				if !errors.As(err, &re) {
					t.Fatalf("ReadTerm(%q) = %v, %v; want a *ReadError", tc.text, term, err)
				}
				if !strings.Contains(re.Msg, want) {
					t.Fatalf("ReadTerm(%q) error %q, want it to contain %q", tc.text, re.Msg, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadTerm(%q): %v", tc.text, err)
			}
			if got := writer.WriteQ(term, nil); got != tc.want {
				t.Fatalf("ReadTerm(%q) = %s, want %s", tc.text, got, tc.want)
			}
		})
	}
}

func TestReadTermErrorPosition(t *testing.T) {
	_, err := ReadTerm("plan([\n  final(var(r)) oops])", ReadLimits{})
	var re *ReadError
	if !errors.As(err, &re) {
		t.Fatalf("want *ReadError, got %v", err)
	}
	if re.Pos.Line != 2 {
		t.Fatalf("error at %v (%s), want line 2", re.Pos, re.Msg)
	}
}

// TestReadTermIgnoresUserOperators checks that ReadTerm does not see an
// operator a user interpreter defined.
func TestReadTermIgnoresUserOperators(t *testing.T) {
	in := New(nil)
	if err := in.Consult(t.Context(), "ops.pl", ":- op(700, xfx, ===>).\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTerm("a ===> b", ReadLimits{}); err == nil {
		t.Fatal("ReadTerm parsed a user-defined operator")
	}
}

func TestReadTermConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := ReadTerm(`plan([final(literal("x"))])`, ReadLimits{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func FuzzReadTerm(f *testing.F) {
	for _, s := range []string{`plan([final(literal(1))])`, "[*", "a. b", `"x`, "'\\x41\\'", "0'a", "f(X)", "- - a", "{a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		term, err := ReadTerm(s, ReadLimits{MaxBytes: 4096})
		if err != nil {
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v is not a *ReadError", err, err)
			}
			return
		}
		if term == nil {
			t.Fatal("nil term without error")
		}
	})
}

func TestReadTermEscapes(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // Go string of the chars list or atom read
	}{
		{`"\x0\"`, "\x00"},
		{`"a\x41\b"`, "aAb"},
		{`"\101\"`, "A"},
		{`'\x41\'`, "A"},
		{`"\\"`, `\`},
		{`"it''s \"q\""`, `it''s "q"`},
		{`'it''s'`, "it's"},
	} {
		term, err := ReadTerm(tc.text, ReadLimits{})
		if err != nil {
			t.Errorf("ReadTerm(%s): %v", tc.text, err)
			continue
		}
		got, err := TextOf(term, nil)
		if err != nil || got != tc.want {
			t.Errorf("ReadTerm(%s) = %q, %v; want %q", tc.text, got, err, tc.want)
		}
	}
	if _, err := ReadTerm(`f(0'a, 0'\n, 0''', "x")`, ReadLimits{}); err != nil {
		t.Errorf("character codes: %v", err)
	}
}

func TestNextClause(t *testing.T) {
	for _, tc := range []struct{ text, clause string }{
		{"X = 1.\n", "X = 1."},
		{"X = 1. Y = 2.\n", "X = 1."},
		{"X = 'a. b'.\n", "X = 'a. b'."},
		{"X = \"a.\nb\".\n", "X = \"a.\nb\"."},
		{"X = 0'., Y = 1.\n", "X = 0'., Y = 1."},
		{"X =.. Y.\n", "X =.. Y."},
		{"% c.\nX = 1.", "% c.\nX = 1."},
		{"X = [1,\n2]", ""},
		{"X = 'abc.\n", ""},
		{"/* x. */", ""},
	} {
		clause, rest, ok := NextClause(tc.text)
		if !ok {
			clause = ""
		}
		if clause != tc.clause || ok && clause+rest != tc.text {
			t.Errorf("NextClause(%q) = %q, %q, %v; want %q", tc.text, clause, rest, ok, tc.clause)
		}
	}
	for text, want := range map[string]bool{"": true, " \n% c\n/* d */\n": true, "a": false, "'": false} {
		if got := Blank(text); got != want {
			t.Errorf("Blank(%q) = %v", text, got)
		}
	}
}
