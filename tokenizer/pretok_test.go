package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// pretokenizers pairs each hand-written pre-tokenizer with the pattern it
// replaces.
var pretokenizers = []struct {
	pattern string
	next    func(string, int) int
}{
	{PatternR50k, nextR50k},
	{PatternCl100k, nextCl100k},
	{PatternO200k, nextO200k},
}

// trickyTexts exercise the patterns' subtle rules: lookahead after
// whitespace runs, whitespace before line breaks, case-folded contractions
// (ſ folds to s), letters of every case class and combining marks, numbers
// beyond ASCII, punctuation runs with line breaks and slashes.
var trickyTexts = []string{
	"", " ", "  ", " \n \n", "a  b", "a \tb", "x\r\n\r\n  y", "\n\n\n", "  \u00a0\u3000x",
	"I'm, you'RE, he'S, it'ſ, we'LL, they'Ve, 'd'", "''s", "don't'", "'", "' s",
	"HelloWorld ABCdef abcDEF ǅungla ʰello", "e\u0301t\u0301É", "!\u0301a", " \u0301x",
	"12345 ٣٤٥٦ ²³ Ⅻ ½", "a...\n\n", "path/to/x//\n", " ---\r\n", "日本語テキスト", "👨‍👩‍👧 café",
	"\ta", "\t!", " !", "(hello", "x\u2028y", "end ", "end\n",
}

func handPieces(next func(string, int) int, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := next(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func regexpPieces(t testing.TB, re *regexp2.Regexp, s string) []string {
	idx, err := re.FindAllStringIndex(s, -1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(idx))
	at := 0
	for _, m := range idx {
		if m[0] != at {
			t.Fatalf("pattern skips %q", s[at:m[0]])
		}
		out = append(out, s[m[0]:m[1]])
		at = m[1]
	}
	return out
}

// checkPretokenizers fails t where a hand-written pre-tokenizer splits s
// otherwise than its pattern.
func checkPretokenizers(t testing.TB, res []*regexp2.Regexp, name, s string) {
	t.Helper()
	for k, p := range pretokenizers {
		want := regexpPieces(t, res[k], s)
		got := handPieces(p.next, s)
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("%s: pattern %d: piece %d = %q, the regexp gives %q (in %q)", name, k, i, got[i], want[i], s[len(strings.Join(want[:i], "")):][:min(80, len(s)-len(strings.Join(want[:i], "")))])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: pattern %d: %d pieces, the regexp gives %d", name, k, len(got), len(want))
		}
	}
}

func compilePatterns(t testing.TB) []*regexp2.Regexp {
	res := make([]*regexp2.Regexp, len(pretokenizers))
	for k, p := range pretokenizers {
		re, err := regexp2.Compile(p.pattern, regexp2.None) // not MustCompile: see builtin.go
		if err != nil {
			t.Fatal(err)
		}
		res[k] = re
	}
	return res
}

// TestPretokenizers: on the golden corpus, the cross-check cases and the
// tricky texts, each hand-written pre-tokenizer cuts exactly the pieces
// regexp2 matches with its pattern.
func TestPretokenizers(t *testing.T) {
	res := compilePatterns(t)
	for name, s := range goldenInputs(t) {
		checkPretokenizers(t, res, name, sanitize(s))
	}
	for _, s := range trickyTexts {
		checkPretokenizers(t, res, "tricky", s)
	}
}

// TestRuneClasses: the pre-tokenizers' rune classes are regexp2's, for
// every rune.
func TestRuneClasses(t *testing.T) {
	var sb strings.Builder
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			sb.WriteRune(r)
		}
	}
	all := sb.String()
	for _, c := range []struct {
		class   uint8
		pattern string
	}{
		{cLetter, `\p{L}`},
		{cNumber, `\p{N}`},
		{cSpace, `\s`},
		{cUpper, `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`},
		{cLower, `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`},
	} {
		re := regexp2.MustCompile(c.pattern+`+`, regexp2.None)
		idx, err := re.FindAllStringIndex(all, -1)
		if err != nil {
			t.Fatal(err)
		}
		in := make([]bool, len(all))
		for _, m := range idx {
			for i := m[0]; i < m[1]; i++ {
				in[i] = true
			}
		}
		for i, r := range all {
			if got := classOf(r)&c.class != 0; got != in[i] {
				t.Fatalf("%U: in %s: %v, regexp2 says %v", r, c.pattern, got, in[i])
			}
		}
	}
}

// FuzzPretokenizer checks each hand-written pre-tokenizer against its
// pattern on arbitrary valid UTF-8.
func FuzzPretokenizer(f *testing.F) {
	for _, s := range trickyTexts {
		f.Add(s)
	}
	res := compilePatterns(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // Encoding sanitizes before splitting
		}
		checkPretokenizers(t, res, "fuzz", s)
	})
}
