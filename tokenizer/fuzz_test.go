package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenizerRoundTrip checks, for valid UTF-8 on every built-in
// encoding, that Decode(Encode(s)) == s and Count(s) == len(Encode(s)),
// and that the estimator never panics. Seeds live in
// testdata/fuzz/FuzzTokenizerRoundTrip.
func FuzzTokenizerRoundTrip(f *testing.F) {
	for _, s := range []string{"", "hello world", " \n \n", "<|endoftext|>", "👨‍👩‍👧‍👦", "日本語\r\n", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		f.Add(s)
	}
	r, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	encs := make([]*Encoding, 0, len(goldenEncodings))
	for _, name := range goldenEncodings {
		e, err := r.Encoding(name)
		if err != nil {
			f.Fatal(err)
		}
		encs = append(encs, e)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Estimate(s)
		if !utf8.ValidString(s) {
			// Invalid input is counted as its encoding/json replacement.
			for _, e := range encs {
				if e.Count(s) != e.Count(sanitize(s)) {
					t.Fatalf("%s: Count(%q) differs from Count(sanitize)", e.Name(), s)
				}
			}
			return
		}
		for _, e := range encs {
			ids := e.Encode(s)
			if n := e.Count(s); n != len(ids) {
				t.Fatalf("%s: Count(%q) = %d, len(Encode) = %d", e.Name(), s, n, len(ids))
			}
			got, err := e.Decode(ids)
			if err != nil || got != s {
				t.Fatalf("%s: Decode(Encode(%q)) = %q, %v", e.Name(), s, got, err)
			}
		}
	})
}

// TestSplitInWindowsIsSplitWhole: a text longer than the split window is
// cut into exactly the pre-tokens one match over the whole text gives —
// with whitespace runs, newlines, digits, apostrophes, multi-byte runes and
// a pre-token longer than the window straddling the window edges.
func TestSplitInWindowsIsSplitWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"the", " lease", "  ", "\n", "\n\n ", "   \t", "1234", "'s", "'LL", "日本語", "👨‍👩‍👧", " café", "!?", "x"}
	var sb strings.Builder
	for sb.Len() < 5*splitWindow {
		if rng.IntN(5000) == 0 {
			sb.WriteString(strings.Repeat("a", splitWindow+17)) // one pre-token wider than the window
		}
		sb.WriteString(pieces[rng.IntN(len(pieces))])
	}
	text := sb.String()
	for k, re := range compilePatterns(t) {
		b := &bpe{re: re}
		var got []string
		b.split(text, func(p string) { got = append(got, p) })
		idx, err := re.FindAllStringIndex(text, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(idx) {
			t.Fatalf("pattern %d: %d pieces in windows, %d whole", k, len(got), len(idx))
		}
		for i, m := range idx {
			if got[i] != text[m[0]:m[1]] {
				t.Fatalf("pattern %d: piece %d = %q, whole gives %q", k, i, got[i], text[m[0]:m[1]])
			}
		}
	}
}
