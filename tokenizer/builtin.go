package tokenizer

import (
	_ "embed" // the vocabulary tables
	"fmt"
	"sync"
)

// Names of the built-in encodings. Their vocabularies are embedded in the
// binary (tables/, generated from github.com/tiktoken-go/tokenizer's); none
// is read from disk or the network.
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

// The vocabularies: tables generated from the ranks github.com/tiktoken-go/
// tokenizer compiles in (go generate; TestBuiltinTables checks they are
// current) and embedded as they are, so building one costs a header parse
// (p50k_edit shares p50k_base's, o200k_harmony o200k_base's).
//
// They split with hand-written pre-tokenizers (pretok.go), checked against
// regexp2 interpreting the patterns. NB: the regexp must be compiled with
// regexp2.Compile, never MustCompile: github.com/tiktoken-go/tokenizer
// registers regexp2cg-generated matchers for these exact patterns
// (MustCompile returns them), and in v0.10.0 the generated `\s*[\r\n]+`
// stops at the first line break: cl100k_base " \n \n" gives [720 720]
// where tiktoken gives [33006] (o200k_base: [793 793] for [56319]).
//
//go:generate go test -run ^TestBuiltinTables$ -update .
var (
	r50kBPE   = tableBPE(R50kBase, r50kTable, nextR50k)
	p50kBPE   = tableBPE(P50kBase, p50kTable, nextR50k)
	cl100kBPE = tableBPE(Cl100kBase, cl100kTable, nextCl100k)
	o200kBPE  = tableBPE(O200kBase, o200kTable, nextO200k)
)

var (
	//go:embed tables/r50k_base.ranks
	r50kTable string
	//go:embed tables/p50k_base.ranks
	p50kTable string
	//go:embed tables/cl100k_base.ranks
	cl100kTable string
	//go:embed tables/o200k_base.ranks
	o200kTable string
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

// tableBPE returns the loader of the built-in encoding name: its embedded
// table, split by next (the pattern's hand-written pre-tokenizer).
func tableBPE(name, table string, next func(string, int) int) func() *bpe {
	return sync.OnceValue(func() *bpe {
		v, err := parseVocab(table)
		if err != nil {
			panic(fmt.Sprintf("tokenizer: built-in %s: %v", name, err)) // TestBuiltinTables checks every table
		}
		return &bpe{vocab: v, next: next}
	})
}
