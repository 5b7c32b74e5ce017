package tokenizer

import (
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
