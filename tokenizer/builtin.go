package tokenizer

import (
	"fmt"
	"sync"

	"github.com/dlclark/regexp2/v2"
	tiktoken "github.com/tiktoken-go/tokenizer"
)

// Names of the built-in encodings. Their vocabularies are compiled into the
// binary by github.com/tiktoken-go/tokenizer; none is read from disk or the
// network.
const (
	R50kBase     = "r50k_base"
	P50kBase     = "p50k_base"
	P50kEdit     = "p50k_edit"
	Cl100kBase   = "cl100k_base"
	O200kBase    = "o200k_base"
	O200kHarmony = "o200k_harmony" // o200k_base text ranks + the harmony special tokens (gpt-oss)
)

// builtins are shared by every Registry, and so are their vocabularies,
// which load on first use.
var builtins = []*Encoding{
	newBuiltin(R50kBase, r50kBPE, []special{{"<|endoftext|>", 50256}}),
	newBuiltin(P50kBase, p50kBPE, []special{{"<|endoftext|>", 50256}}),
	newBuiltin(P50kEdit, p50kBPE, []special{
		{"<|endoftext|>", 50256},
		{"<|fim_prefix|>", 50281},
		{"<|fim_middle|>", 50282},
		{"<|fim_suffix|>", 50283},
	}),
	newBuiltin(Cl100kBase, cl100kBPE, []special{
		{"<|endoftext|>", 100257},
		{"<|fim_prefix|>", 100258},
		{"<|fim_middle|>", 100259},
		{"<|fim_suffix|>", 100260},
		{"<|endofprompt|>", 100276},
	}),
	newBuiltin(O200kBase, o200kBPE, o200kSpecials),
	newBuiltin(O200kHarmony, o200kBPE, harmonySpecials()),
}

// The vocabularies, each extracted once per process from the ranks that
// github.com/tiktoken-go/tokenizer compiles in (p50k_edit shares p50k_base's,
// o200k_harmony o200k_base's).
//
// NB: rlmpl tokenizes with its own engine ([bpe]) and regexp2's
// interpreter rather than the library's codecs. The library registers
// regexp2cg-generated matchers for these exact patterns (regexp2.MustCompile
// returns them), and in v0.10.0 the generated `\s*[\r\n]+` stops at the
// first line break: cl100k_base " \n \n" gives [720 720] where tiktoken gives
// [33006] (o200k_base: [793 793] for [56319]). Trailing spaces before line
// breaks are common in code and Markdown. regexp2.Compile interprets the
// same patterns and agrees with tiktoken on the whole golden corpus, so it
// must stay Compile, never MustCompile.
var (
	r50kBPE   = libBPE(tiktoken.R50kBase, PatternR50k, 50256)
	p50kBPE   = libBPE(tiktoken.P50kBase, PatternR50k, 50281)
	cl100kBPE = libBPE(tiktoken.Cl100kBase, PatternCl100k, 100256)
	o200kBPE  = libBPE(tiktoken.O200kBase, PatternO200k, 199998)
)

var o200kSpecials = []special{{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}

// harmonySpecials is upstream tiktoken's o200k_harmony (tiktoken_ext/
// openai_public.py), in its definition order: o200k_base's specials, the
// named harmony tokens, then <|reserved_N|> for every other ID up to
// 201087. NB: 200018 is both <|endofprompt|> and <|reserved_200018|>; the
// later name is what it decodes to, as in tiktoken.
func harmonySpecials() []special {
	s := append([]special(nil), o200kSpecials...)
	s = append(s,
		special{"<|startoftext|>", 199998},
		special{"<|endoftext|>", 199999},
		special{"<|reserved_200000|>", 200000},
		special{"<|reserved_200001|>", 200001},
		special{"<|return|>", 200002},
		special{"<|constrain|>", 200003},
		special{"<|reserved_200004|>", 200004},
		special{"<|channel|>", 200005},
		special{"<|start|>", 200006},
		special{"<|end|>", 200007},
		special{"<|message|>", 200008},
		special{"<|reserved_200009|>", 200009},
		special{"<|reserved_200010|>", 200010},
		special{"<|reserved_200011|>", 200011},
		special{"<|call|>", 200012},
	)
	for id := 200013; id < 201088; id++ {
		s = append(s, special{fmt.Sprintf("<|reserved_%d|>", id), id})
	}
	return s
}

func newBuiltin(name string, vocab func() *bpe, specials []special) *Encoding {
	return newEncoding(name, func() codec { return vocab() }, specials)
}

// libBPE returns a loader of the ranks below n of the library's
// encoding enc, split by pattern. The library exposes its ranks only
// through Decode, one ID at a time; the codec it builds is dropped after.
func libBPE(enc tiktoken.Encoding, pattern string, n int) func() *bpe {
	return sync.OnceValue(func() *bpe {
		c, err := tiktoken.Get(enc)
		if err != nil {
			panic(fmt.Sprintf("tokenizer: built-in %s: %v", enc, err)) // the library lost an encoding
		}
		re, err := regexp2.Compile(pattern, regexp2.None) // not MustCompile: see above
		if err != nil {
			panic(fmt.Sprintf("tokenizer: built-in %s: pattern: %v", enc, err))
		}
		b := &bpe{ranks: make(map[string]int, n), tokens: make([]string, n), re: re}
		id := []uint{0}
		for i := range n {
			id[0] = uint(i)
			tok, err := c.Decode(id)
			if err != nil {
				continue // a hole: p50k_base has none at 50256 (<|endoftext|>)
			}
			b.ranks[tok] = i
			b.tokens[i] = tok
		}
		for c := range 256 {
			if _, ok := b.ranks[string([]byte{byte(c)})]; !ok {
				panic(fmt.Sprintf("tokenizer: built-in %s: byte 0x%02x has no rank", enc, c)) // the library changed
			}
		}
		return b
	})
}
