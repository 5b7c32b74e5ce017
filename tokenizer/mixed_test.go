package tokenizer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// mixedCorpus generates the deterministic mixed corpus of the speed
// targets: about size bytes of English prose, Go code, JSON and CJK text,
// in chunks of a few kilobytes (one message each), interleaved.
func mixedCorpus(size int) []string {
	rng := rand.New(rand.NewPCG(25, 2026))
	words := strings.Fields(`the a of to and in is that it for on with as was be by this are or from at an
		not have but had they his her which you were all we one there been can their has more would what
		will when if who so no about out up into them some could time these two may then do first any my
		now such like our over man me even most made after also did many before must through back years
		where much your way well down should because each just those people how too little state good very
		make world still own see men work long get here between both life being under never day same another
		know while last might us great old year off come since against go came right used take three
		Tokenizer Ledger Sessions Budget HTTP JSON Prolog don't it's we're they've I'm you'll she'd LEASE`)
	cjk := []string{"日本語の文章", "東京都", "会議は明日の午後三時から始まります", "中文文本处理", "我们今天讨论预算",
		"한국어 문장입니다", "데이터베이스", "情報処理学会", "模型的上下文窗口", "トークン数を数える", "、", "。", "「引用」"}
	idents := []string{"ctx", "err", "session", "budget", "tokens", "msg", "conv", "id", "n", "buf", "pack", "limit"}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	var chunks []string
	total := 0
	for total < size {
		var b strings.Builder
		for b.Len() < 3000+rng.IntN(2000) {
			switch rng.IntN(10) {
			case 0, 1, 2, 3: // English
				for range 3 + rng.IntN(4) {
					n := 6 + rng.IntN(14)
					for i := range n {
						w := pick(words)
						if i == 0 {
							w = strings.ToUpper(w[:1]) + w[1:]
						}
						b.WriteString(w)
						if i < n-1 {
							b.WriteString(pick([]string{" ", " ", " ", " ", ", "}))
						}
					}
					b.WriteString(pick([]string{". ", "! ", "? ", ".\n", ".\n\n"}))
				}
			case 4, 5: // Go code
				f, a, c := pick(idents), pick(idents), pick(idents)
				fmt.Fprintf(&b, "func (s *%s) %s(%s int) (int, error) {\n\tif %s > %d {\n\t\treturn 0, fmt.Errorf(\"%s: %%d over %%d\", %s, %d)\n\t}\n\t%s := make([]byte, 0, %d)  \n\tfor i := range %s {\n\t\t%s = append(%s, byte(i))\n\t}\n\treturn len(%s), nil // %s\n}\n\n",
					strings.ToUpper(f[:1])+f[1:], a, c, c, rng.IntN(100000), f, c, rng.IntN(1000), a, rng.IntN(4096), c, a, a, a, pick(words))
			case 6, 7: // JSON
				fmt.Fprintf(&b, "{\"id\": \"msg_%08x\", \"role\": \"%s\", \"tokens\": %d, \"score\": %.4f, \"tags\": [\"%s\", \"%s\"], \"ok\": %t, \"path\": \"/var/lib/%s/%d.json\"}\n",
					rng.Uint32(), pick([]string{"user", "assistant", "tool"}), rng.IntN(100000), rng.Float64(), pick(words), pick(idents), rng.IntN(2) == 0, pick(idents), rng.IntN(1000))
			default: // CJK
				for range 4 + rng.IntN(8) {
					b.WriteString(pick(cjk))
				}
				b.WriteString(pick([]string{"。", "。\n", "！", " "}))
			}
		}
		chunks = append(chunks, b.String())
		total += b.Len()
	}
	return chunks
}

// mixedSize is the mixed corpus's size, as in issue 25's measurements.
const mixedSize = 10 << 20

// BenchmarkMixed counts the mixed corpus with rlmpl's encodings and with
// github.com/tiktoken-go/tokenizer's, side by side; testdata/mixed.mjs
// runs the official tiktoken on the same chunks (see testdata/mixed.sh).
func BenchmarkMixed(b *testing.B) {
	chunks := mixedCorpus(mixedSize)
	r := newTestRegistry(b)
	for _, name := range []string{O200kBase, Cl100kBase} {
		enc, _ := r.Encoding(name)
		lib, _ := tiktoken.Get(tiktoken.Encoding(name))
		count := map[string]func(string) int{
			"rlmpl":       enc.Count,
			"tiktoken-go": func(s string) int { n, _ := lib.Count(s); return n },
		}
		for _, impl := range []string{"rlmpl", "tiktoken-go"} {
			b.Run(name+"/"+impl, func(b *testing.B) {
				b.SetBytes(int64(mixedSize))
				tokens := 0
				for b.Loop() {
					for _, c := range chunks {
						tokens += count[impl](c)
					}
				}
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// TestMixedCorpusFile writes the mixed corpus and rlmpl's counts of each
// chunk to $RLMPL_MIXED_CORPUS (JSON), for testdata/mixed.mjs to time the
// official tiktoken on and to compare counts with; without it, it skips.
func TestMixedCorpusFile(t *testing.T) {
	path := os.Getenv("RLMPL_MIXED_CORPUS")
	if path == "" {
		t.Skip("RLMPL_MIXED_CORPUS not set")
	}
	chunks := mixedCorpus(mixedSize)
	r := newTestRegistry(t)
	counts := map[string][]int{}
	for _, name := range []string{O200kBase, Cl100kBase} {
		enc, _ := r.Encoding(name)
		for _, c := range chunks {
			counts[name] = append(counts[name], enc.Count(c))
		}
	}
	data, err := json.Marshal(map[string]any{"chunks": chunks, "counts": counts})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
