package prolog_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestWriteText: text (a chars list ending in Go-backed text) is written as
// "..." by the quoted writers, bare by the unquoted ones, and as a list by
// write_canonical/1; lists built cell by cell stay lists.
func TestWriteText(t *testing.T) {
	for _, tc := range []struct{ goal, want string }{
		{`writeq("hello")`, `"hello"`},
		{`print(error(conversation_error([message("store: closed")])))`, `error(conversation_error([message("store: closed")]))`},
		{`write(f("hello world"))`, `f(hello world)`},
		{`write_canonical("ab")`, `'.'(a,'.'(b,[]))`},
		{`write_term("ab", [quoted(true)])`, `"ab"`},
		{`write_term("ab", [])`, `ab`},
		{`writeq([a,b])`, `[a,b]`},
		{`msort([b,a], L), writeq(L)`, `[a,b]`},
		{`atom_chars(abc, L), writeq(L)`, `"abc"`},
		{`append("ab", "cd", L), writeq(L)`, `"abcd"`},
		{`append([x], "cd", L), writeq(L)`, `"xcd"`},
		{`"abc" = [_|T], writeq(T)`, `"bc"`},
		{`writeq(["ab", [], "c"])`, `["ab",[],"c"]`},
		{`writeq("a\"b\\c\nd\te")`, `"a\"b\\c\nd\te"`},
		{`atom_codes(A, [7, 0x200B]), atom_chars(A, L), writeq(L)`, `"\x7\\x200B\"`},
		{`writeq("naïve — ok 👩")`, `"naïve — ok 👩"`},
		{`writeq(- "a")`, `-"a"`},
		{`writeq(f(X, "a", X))`, `f(_G,"a",_G)`},
		{`format("~w|~p|~q|~a|~s", ["ab", "ab", "ab", "ab", "ab"])`, `ab|"ab"|"ab"|ab|ab`},
		{`format("~k", ["ab"])`, `'.'(a,'.'(b,[]))`},
		{`X = "ab", set_prolog_flag(double_quotes, codes), writeq(X), set_prolog_flag(double_quotes, chars)`, `[a,b]`},
	} {
		t.Run(tc.goal, func(t *testing.T) {
			var out bytes.Buffer
			in := prolog.New(&prolog.Options{Stdout: &out})
			if _, err := in.Once(context.Background(), tc.goal); err != nil {
				t.Fatal(err)
			}
			if got := varName.ReplaceAllString(out.String(), "_G"); got != tc.want {
				t.Errorf("output %s, want %s", got, tc.want)
			}
		})
	}
}

// FuzzTextRoundTrip: WriteQ of any text reads back as the same text, with
// the interpreter's reader and with ReadTerm.
func FuzzTextRoundTrip(f *testing.F) {
	for _, s := range []string{"hello", "a\"b", `\`, "\x00\x1f\x7f", "naïve — “q” 👩‍💻", "it's", "\u200b\u00ad", "a\\x41\\"} {
		f.Add(s)
	}
	in := prolog.New(nil)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || s == "" {
			return
		}
		text := in.WriteQ(prolog.Chars(s), nil)
		bs, err := in.Once(context.Background(), "X = "+text+", atom_chars(A, X)")
		if err != nil {
			t.Fatalf("%q written as %s: %v", s, text, err)
		}
		if got := in.Write(bs[1].Value, nil); got != s {
			t.Fatalf("%q written as %s read back as %q", s, text, got)
		}
		if term, err := prolog.ReadTerm("f("+text+")", prolog.ReadLimits{}); err != nil || !strings.Contains(in.WriteQ(term, nil), text) {
			t.Fatalf("ReadTerm of %s: %v", text, err)
		}
	})
}

// TestNilTermsAreWritten: a Go predicate that builds a term with a hole
// (an absent record field) or an error with a nil culprit must not crash
// the writers or format/2: the hole is written as '<missing>'.
func TestNilTermsAreWritten(t *testing.T) {
	in := newInterp(t, nil)
	in.Install(
		prolog.Pred1("nil_arg", "nil_arg(-T) is det", func(c *prolog.Call, out engine.Term) (bool, error) {
			return c.Unify(out, engine.NewAtom("f").Apply(nil)), nil
		}),
		prolog.Pred0("nil_culprit", "nil_culprit is det", func(c *prolog.Call) (bool, error) {
			return false, prolog.TypeError("integer", nil)
		}),
	)
	for _, tc := range []struct{ goal, want string }{
		{`nil_arg(T), format(atom(A), "~p ~q ~w", [T, T, T])`, `'f(\'<missing>\') f(\'<missing>\') f(<missing>)'`},
		{`catch(nil_culprit, E, true), format(atom(A), "~p", [E])`, `'error(type_error(integer,\'<missing>\'),nil_culprit/0)'`},
		{`nil_arg(T), with_output_to(atom(A), write(T))`, `'f(<missing>)'`},
	} {
		bs, err := once(t, in, tc.goal)
		if err != nil {
			t.Fatalf("%s: %v", tc.goal, err)
		}
		if bs["A"] != tc.want {
			t.Errorf("%s: A = %s, want %s", tc.goal, bs["A"], tc.want)
		}
	}
}

// TestDescribeCapsCulprits: an error message shows its culprit within a
// depth and size cap, so a 100k-deep, a 10k-nested list, a 100k-wide or
// a cyclic culprit is described at once (writing the deep ones in full
// took minutes and gigabytes in ichiban's writer).
func TestDescribeCapsCulprits(t *testing.T) {
	in := newInterp(t, nil)
	deep := engine.Term(engine.NewAtom("x"))
	for range 100000 {
		deep = engine.NewAtom("f").Apply(deep)
	}
	nested := engine.Term(engine.NewAtom("x"))
	for range 10000 {
		nested = engine.List(nested)
	}
	wide := make([]engine.Term, 100000)
	for i := range wide {
		wide[i] = engine.Integer(i)
	}
	cyc := engine.NewVariable()
	env, _ := (*engine.Env)(nil).Unify(cyc, engine.NewAtom("g").Apply(cyc))
	for _, tc := range []struct {
		name    string
		culprit engine.Term
		env     *engine.Env
		want    string
	}{
		{"deep", deep, nil, "found `f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(f(...))))))))))))))))))))' (a compound)"},
		{"nested lists", nested, nil, "found `[[[[[[[[[[[[[[[[[[[[...]]]]]]]]]]]]]]]]]]]]' (a list)"},
		{"wide list", engine.List(wide...), nil, "found `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19|...]' (a list)"},
		{"wide compound", engine.NewAtom("w").Apply(wide...), nil, "...' (a compound)"},
		{"cyclic", cyc, env, "found `g(g(g(g(g(g(g(g(g(g(g(g(g(g(g(g(g(g(g(g(...))))))))))))))))))))' (a compound)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			culprit := prolog.Resolved(tc.culprit, tc.env)
			start := time.Now()
			msg := prolog.Message(in, engine.NewAtom("error").Apply(
				engine.NewAtom("type_error").Apply(engine.NewAtom("atom"), culprit), engine.NewAtom("foo/1")))
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if len(msg) > 2200 || !strings.HasSuffix(msg, tc.want) {
				t.Errorf("message (%d bytes) = %.300s..., want suffix %s", len(msg), msg, tc.want)
			}
		})
	}
}
