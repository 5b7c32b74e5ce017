package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// The golden files were produced once by testdata/gen_golden.mjs with the
// official tiktoken (npm tiktoken@1.0.22); these tests need no node.

type goldenFile struct {
	Generator string `json:"generator"`
	Encoding  string `json:"encoding"`
	Special   []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"special"`
	Cases []struct {
		Name  string `json:"name"`
		Bytes int    `json:"bytes"`
		Count int    `json:"count"`
		IDs   []int  `json:"ids"`
	} `json:"cases"`
}

var goldenEncodings = []string{R50kBase, P50kBase, P50kEdit, Cl100kBase, O200kBase, O200kHarmony}

func loadGolden(t testing.TB, encoding string) goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", encoding+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("golden %s: %v", encoding, err)
	}
	if g.Encoding != encoding || len(g.Cases) == 0 {
		t.Fatalf("golden %s: bad file (encoding %q, %d cases)", encoding, g.Encoding, len(g.Cases))
	}
	return g
}

// goldenInputs returns the texts the generator read, by case name.
func goldenInputs(t testing.TB) map[string]string {
	t.Helper()
	in := make(map[string]string)
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in["corpus/"+filepath.Base(f)] = string(b)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Name, Text string }
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		in["case/"+c.Name] = c.Text
	}
	return in
}

func newTestRegistry(t testing.TB) *Registry {
	t.Helper()
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkGolden compares enc with the golden IDs of g and returns the number
// of disagreeing cases.
func checkGolden(t *testing.T, enc *Encoding, g goldenFile, inputs map[string]string) {
	t.Helper()
	disagree := 0
	for _, c := range g.Cases {
		text, ok := inputs[c.Name]
		if !ok {
			t.Fatalf("golden case %s has no input", c.Name)
		}
		if len(text) != c.Bytes {
			t.Fatalf("%s: input is %d bytes, golden was made from %d", c.Name, len(text), c.Bytes)
		}
		ids := enc.Encode(text)
		if !slices.Equal(ids, c.IDs) {
			disagree++
			i := 0
			for i < min(len(ids), len(c.IDs)) && ids[i] == c.IDs[i] {
				i++
			}
			t.Errorf("%s %s: Encode differs from tiktoken at token %d (got %d tokens, want %d)",
				enc.Name(), c.Name, i, len(ids), len(c.IDs))
		}
		if n := enc.Count(text); n != c.Count {
			t.Errorf("%s %s: Count = %d, want %d", enc.Name(), c.Name, n, c.Count)
		}
		if got, err := enc.Decode(c.IDs); err != nil || got != text {
			t.Errorf("%s %s: Decode(golden ids) = %q, %v; want the input", enc.Name(), c.Name, trunc(got), err)
		}
	}
	if disagree != 0 {
		t.Errorf("%s: %d of %d cases disagree with tiktoken", enc.Name(), disagree, len(g.Cases))
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestGolden checks every built-in encoding against the official tiktoken
// token IDs: 0 disagreements.
func TestGolden(t *testing.T) {
	r := newTestRegistry(t)
	inputs := goldenInputs(t)
	for _, name := range goldenEncodings {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			enc, err := r.Encoding(name)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, enc, g, inputs)

			// Special tokens: same names, IDs, and decoded text.
			if got, want := len(enc.SpecialTokens()), countNames(g); got != want {
				t.Errorf("%d special tokens, tiktoken has %d", got, want)
			}
			for _, s := range g.Special {
				if id, ok := enc.SpecialToken(s.Name); !ok || id != s.ID {
					t.Errorf("SpecialToken(%q) = %d, %v; want %d", s.Name, id, ok, s.ID)
				}
				if got, err := enc.Decode([]int{s.ID}); err != nil || got != s.Text {
					t.Errorf("Decode([%d]) = %q, %v; want %q", s.ID, got, err, s.Text)
				}
			}
		})
	}
}

func countNames(g goldenFile) int {
	names := make(map[string]bool)
	for _, s := range g.Special {
		names[s.Name] = true
	}
	return len(names)
}

// ranksFile renders enc's ordinary tokens as a tiktoken-format ranks file,
// shuffled into a non-sorted order to exercise the parser.
func ranksFile(t testing.TB, enc *Encoding) []byte {
	t.Helper()
	var lines []string
	for id := 0; ; id++ {
		if _, ok := enc.specialID[id]; ok {
			break
		}
		tok, err := enc.Decode([]int{id})
		if err != nil {
			break
		}
		lines = append(lines, fmt.Sprintf("%s %d\n", base64.StdEncoding.EncodeToString([]byte(tok)), id))
	}
	sort.Strings(lines) // by base64 text, not by rank
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
	}
	return b.Bytes()
}

// TestNewEncodingGolden rebuilds encodings from tiktoken-format ranks files
// with NewEncoding (rlmpl's own BPE, not the library's) and checks them
// against the same golden IDs.
func TestNewEncodingGolden(t *testing.T) {
	r := newTestRegistry(t)
	inputs := goldenInputs(t)
	for _, tc := range []struct{ name, pattern string }{
		{R50kBase, PatternR50k},
		{Cl100kBase, PatternCl100k},
		{O200kBase, PatternO200k},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name != R50kBase {
				t.Skip("short")
			}
			builtin, err := r.Encoding(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			specials := make(map[string]int)
			for _, n := range builtin.SpecialTokens() {
				specials[n], _ = builtin.SpecialToken(n)
			}
			enc, err := NewEncoding(EncodingSpec{
				Name:          "file_" + tc.name,
				Ranks:         bytes.NewReader(ranksFile(t, builtin)),
				Pattern:       tc.pattern,
				SpecialTokens: specials,
			})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, enc, loadGolden(t, tc.name), inputs)
		})
	}
}

// TestCrossCheck compares rlmpl with the official tiktoken on a large local
// corpus that is not committed: RLMPL_TOKENIZER_CROSSCHECK names the
// JSON-lines file testdata/crosscheck.mjs wrote (token count and SHA-256 of
// the ID stream per file and encoding). Skipped when unset.
func TestCrossCheck(t *testing.T) {
	path := os.Getenv("RLMPL_TOKENIZER_CROSSCHECK")
	if path == "" {
		t.Skip("RLMPL_TOKENIZER_CROSSCHECK not set (see testdata/crosscheck.mjs)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t)
	var files, bytesTotal, tokens, disagree int
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var want struct {
			File, Encoding, Sha256 string
			Count                  int
		}
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		enc, err := r.Encoding(want.Encoding)
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(want.File)
		if err != nil {
			t.Fatal(err)
		}
		ids := enc.Encode(string(text))
		buf := make([]byte, 4*len(ids))
		for i, id := range ids {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(id))
		}
		sum := sha256.Sum256(buf)
		if len(ids) != want.Count || hex.EncodeToString(sum[:]) != want.Sha256 {
			disagree++
			t.Errorf("%s %s: %d tokens (want %d), IDs differ from tiktoken", want.Encoding, want.File, len(ids), want.Count)
		}
		files++
		bytesTotal += len(text)
		tokens += len(ids)
	}
	t.Logf("%d file×encoding pairs, %d bytes, %d tokens, %d disagreements", files, bytesTotal, tokens, disagree)
}
