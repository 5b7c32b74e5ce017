package tokenizer

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

var update = flag.Bool("update", false, "regenerate tables/*.ranks from github.com/tiktoken-go/tokenizer (go generate ./tokenizer)")

// builtinTables are the embedded tables: each built-in vocabulary's ranks
// below n, as github.com/tiktoken-go/tokenizer decodes them.
var builtinTables = []struct {
	name  string
	n     int
	table *string
}{
	{R50kBase, 50256, &r50kTable},
	{P50kBase, 50281, &p50kTable},
	{Cl100kBase, 100256, &cl100kTable},
	{O200kBase, 199998, &o200kTable},
}

// TestBuiltinTables: each committed table is byte for byte what generating
// it from the library's ranks gives now (with -update, it writes them), and
// the embedded copy parses into the same vocabulary.
func TestBuiltinTables(t *testing.T) {
	for _, bt := range builtinTables {
		want := marshalVocab(newVocab(libTokens(t, tiktoken.Encoding(bt.name), bt.n)))
		path := filepath.Join("tables", bt.name+".ranks")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./tokenizer", path)
		}
		if *bt.table != string(want) {
			t.Errorf("%s: the embedded table differs from the generated one", bt.name)
		}
	}
}

// libTokens returns the tokens of ranks 0..n-1 of the library's encoding
// enc ("" for a hole). The library exposes its ranks only through Decode,
// one ID at a time.
func libTokens(t testing.TB, enc tiktoken.Encoding, n int) []string {
	c, err := tiktoken.Get(enc)
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]string, n)
	seen := make(map[string]bool, n)
	for i := range n {
		tok, err := c.Decode([]uint{uint(i)})
		if err != nil {
			continue // a hole: p50k_base has none at 50256 (<|endoftext|>)
		}
		if tok == "" || seen[tok] {
			t.Fatalf("%s: rank %d: empty or duplicate token %q", enc, i, tok)
		}
		seen[tok] = true
		tokens[i] = tok
	}
	for c := range 256 {
		if !seen[string([]byte{byte(c)})] {
			t.Fatalf("%s: byte 0x%02x has no rank", enc, c) // the library changed
		}
	}
	return tokens
}

// marshalVocab is the serialized form parseVocab reads (see vocab).
func marshalVocab(v *vocab) []byte {
	b := []byte(vocabMagic)
	for _, x := range []int{v.n, int(v.rankBits), int(v.slotBits)} {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	b = append(b, v.offs...)
	b = append(b, v.slots...)
	return append(b, v.data...)
}

// TestVocabRank: every token of a table is found at its rank, and pieces
// that are no token (every rank's bytes plus one, a prefix of a long
// token) are not.
func TestVocabRank(t *testing.T) {
	for _, bt := range builtinTables {
		v, err := parseVocab(*bt.table)
		if err != nil {
			t.Fatal(err)
		}
		for r := range v.n {
			tok := v.token(r)
			if tok == "" {
				continue
			}
			if got := v.rank(tok); got != r {
				t.Fatalf("%s: rank(%q) = %d, want %d", bt.name, tok, got, r)
			}
			if miss := tok + "\x00\xff"; v.rank(miss) != noRank {
				t.Fatalf("%s: rank(%q) found a token", bt.name, miss)
			}
		}
	}
}

// TestBuiltinLoadIsFast: building a built-in encoding from its embedded
// table (what a process's first pack pays) takes well under the 10 ms the
// first use may cost.
func TestBuiltinLoadIsFast(t *testing.T) {
	for _, bt := range builtinTables {
		t0 := time.Now()
		v, err := parseVocab(*bt.table)
		if d := time.Since(t0); err != nil || d > 10*time.Millisecond {
			t.Errorf("%s: parse took %v, %v", bt.name, d, err)
		}
		if v.n != bt.n {
			t.Errorf("%s: %d ranks, want %d", bt.name, v.n, bt.n)
		}
	}
}

// TestCountDoesNotAllocate: counting allocates nothing per piece — not in
// the split, the rank lookups, nor the merges of long pieces (CJK runs
// are pieces of hundreds of bytes): ten times the pieces cost no more
// allocations than once (at most the growth of one buffer to the longest
// piece's tokens).
func TestCountDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	r := newTestRegistry(t)
	text := strings.Repeat("The lease's term, in JSON: {\"id\": 42, \"ok\": true}\n\t日本語の会議は明日の午後三時から始まります", 10) +
		strings.Repeat("会議は明日の午後三時から始まります", 10)
	for _, name := range []string{O200kBase, Cl100kBase, R50kBase} {
		enc, _ := r.Encoding(name)
		once := testing.AllocsPerRun(20, func() { enc.Count(text) })
		tenfold := strings.Repeat(text, 10)
		if a := testing.AllocsPerRun(20, func() { enc.Count(tenfold) }); a > once || a > 4 {
			t.Errorf("%s: Count allocates %.1f times for 10× the text, %.1f once", name, a, once)
		}
	}
}
