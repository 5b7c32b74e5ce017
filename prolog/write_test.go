package prolog_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

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
