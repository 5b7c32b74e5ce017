package tokenizer_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rlmpl/rlmpl/tokenizer"
)

func ExampleRegistry_Counter() {
	reg, err := tokenizer.New(nil)
	if err != nil {
		panic(err)
	}
	c, err := reg.Counter("gpt-4o-2024-08-06")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Count("The ledger must be true."))

	// An unknown model is an error, never a silent guess; the estimator is
	// the explicit fallback.
	if _, err := reg.Counter("my-local-model"); errors.Is(err, tokenizer.ErrUnknownModel) {
		fmt.Println(reg.Estimator().Count("The ledger must be true."))
	}
	// Output:
	// 6 exact (bpe, o200k_base)
	// 9 estimated (estimator:v1, +10%)
}

func ExampleRegistry_EncodingForModel() {
	reg, _ := tokenizer.New(nil)
	for _, model := range []string{"gpt-5-mini-2025-08-07", "ft:gpt-4o-mini-2024-07-18:acme::a1b2", "gpt-oss-120b", "gpt-4-0613"} {
		enc, _ := reg.EncodingForModel(model)
		fmt.Println(model, "→", enc.Name())
	}
	// Output:
	// gpt-5-mini-2025-08-07 → o200k_base
	// ft:gpt-4o-mini-2024-07-18:acme::a1b2 → o200k_base
	// gpt-oss-120b → o200k_harmony
	// gpt-4-0613 → cl100k_base
}

func ExampleEncoding_Encode() {
	reg, _ := tokenizer.New(nil)
	enc, _ := reg.Encoding(tokenizer.Cl100kBase)
	// Special-token text in content is ordinary text.
	ids := enc.Encode("<|endoftext|>")
	fmt.Println(ids, enc.Count("<|endoftext|>"))
	text, _ := enc.Decode(ids)
	fmt.Println(text)
	id, _ := enc.SpecialToken("<|endoftext|>")
	fmt.Println(id)
	// Output:
	// [27 91 8862 728 428 91 29] 7
	// <|endoftext|>
	// 100257
}

// The OpenAI cookbook's tools example: the API reported 101 prompt tokens.
func ExampleCounter_CountRequest() {
	reg, _ := tokenizer.New(nil)
	c, _ := reg.Counter("gpt-4o-2024-08-06")
	req := &tokenizer.Request{
		Messages: []tokenizer.Message{
			{Role: "system", Content: "You are a helpful assistant that can answer to questions about the weather."},
			{Role: "user", Content: "What's the weather like in San Francisco?"},
		},
		Tools: []tokenizer.Tool{{Type: "function", Function: tokenizer.FunctionDef{
			Name:        "get_current_weather",
			Description: "Get the current weather in a given location",
			Parameters: []byte(`{"type": "object", "properties": {
				"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
				"unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}},
				"required": ["location"]}`),
		}}},
	}
	b := c.CountRequest(req)
	for _, s := range b.Stages {
		fmt.Printf("%-13s %2d  %3d %s\n", s.Kind, s.Index, s.Count.Tokens, s.Count.Method)
	}
	fmt.Println("total", b.Total)
	// Output:
	// content        0   14 exact
	// framing        0    4 exact
	// content        1    8 exact
	// framing        1    4 exact
	// tool           0   56 estimated
	// tools_end     -1   12 estimated
	// reply_priming -1    3 exact
	// total 101 estimated (sum, o200k_base)
}

// An image part is charged by the model family's published rule: exact for
// a detail-low image on gpt-4o (85 tokens), the family's bound otherwise;
// never as the text of its URL. The request's JSON is the body sent.
func ExampleRequest_parts() {
	reg, _ := tokenizer.New(nil)
	c, _ := reg.Counter("gpt-4o-2024-08-06")
	for _, detail := range []string{tokenizer.DetailLow, tokenizer.DetailHigh} {
		req := tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Parts: []tokenizer.Part{
			tokenizer.TextPart("What is this?"), tokenizer.ImagePart("https://example.org/cat.png", detail)}}}}
		fmt.Println(detail, c.CountRequest(&req).Stages[0].Count)
		if detail == tokenizer.DetailLow {
			body, _ := json.Marshal(req)
			fmt.Println(string(body))
		}
	}
	// Output:
	// low 89 exact (rlmpl:content_parts, o200k_base)
	// {"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"https://example.org/cat.png","detail":"low"}}]}]}
	// high 1449 estimated (rlmpl:content_parts, o200k_base)
}

// NewEncoding reads a tiktoken-format ranks file (such as Llama 3's
// tokenizer.model); the caller opens the file. Here, a toy vocabulary: the
// 256 bytes plus two merges.
func ExampleNewEncoding() {
	var ranks strings.Builder
	for b := range 256 {
		fmt.Fprintf(&ranks, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(b)}), b)
	}
	fmt.Fprintf(&ranks, "%s 256\n", base64.StdEncoding.EncodeToString([]byte("ab")))
	fmt.Fprintf(&ranks, "%s 257\n", base64.StdEncoding.EncodeToString([]byte("abab")))
	toy, err := tokenizer.NewEncoding(tokenizer.EncodingSpec{
		Name:          "toy",
		Ranks:         strings.NewReader(ranks.String()),
		Pattern:       tokenizer.PatternCl100k,
		SpecialTokens: map[string]int{"<|eot|>": 258},
	})
	if err != nil {
		panic(err)
	}
	base, _ := tokenizer.New(nil)
	reg, err := base.With(&tokenizer.Options{
		Encodings: []*tokenizer.Encoding{toy},
		Models:    []tokenizer.Model{{Name: "toy-", Prefix: true, Encoding: "toy"}},
	})
	if err != nil {
		panic(err)
	}
	c, _ := reg.Counter("toy-1b")
	fmt.Println(toy.Encode("ababab"), c.Count("ababab"))
	// Output:
	// [257 256] 2 exact (bpe, toy)
}
