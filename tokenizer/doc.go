// Package tokenizer is rlmpl's token accounting: a registry from encoding
// and model names to token counters that are exact where the model's
// vocabulary is known and labelled estimates everywhere else, plus the
// counting of a rendered chat request stage by stage.
//
// # What it owns
//
//   - The encodings r50k_base, p50k_base, p50k_edit, cl100k_base,
//     o200k_base and o200k_harmony (o200k_base's text ranks with the
//     harmony special tokens of gpt-oss). Their ranks are embedded in the
//     binary as flat tables (tables/, generated from
//     github.com/tiktoken-go/tokenizer's by go generate), ready without
//     parsing; tokenizing is done by this package's own BPE engine, because
//     that library's generated split regexps disagree with tiktoken on
//     whitespace before line breaks (see builtin.go). The token IDs equal the official tiktoken's on the
//     committed golden corpus, for every encoding.
//   - Encodings read at run time from a tiktoken-format ranks file
//     ([NewEncoding]; Llama 3's tokenizer.model is one). No
//     license-restricted vocabulary ships with rlmpl.
//   - rlmpl's model → encoding table ([Registry.Models]): exact names,
//     dated snapshots, prefixes, fine-tunes ("ft:BASE:…"), "openai/" routing
//     names. It is deterministic (exact name, then longest prefix) and never
//     guesses: an unknown model is [ErrUnknownModel].
//   - Chat framing ([Framing]): the OpenAI cookbook's per-message, per-name
//     and reply-priming overhead, its tool-schema rule
//     (num_tokens_for_tools), and rlmpl's rule for tool calls.
//   - The request ([Request], [Message], [Part], [ToolCall], [Tool],
//     [ResponseFormat] and the generation parameters): rlmpl's one chat
//     request value, rendered by the packer, counted here and sent by
//     host/provider. Its JSON form is the OpenAI-compatible wire body
//     ([Request.MarshalJSON]), so what is counted is byte for byte what is
//     sent.
//   - Rendered-request counting ([Counter.CountRequest]): the total of a
//     provider request and a per-stage [Breakdown] whose stages sum exactly
//     to the total.
//
// It leaves to the caller: file I/O (NewEncoding takes an io.Reader),
// caching counts (the host stores a message's count per encoding once),
// validating a request against a provider's rules (host/provider does),
// and the provider's own usage.prompt_tokens, which is the only ground
// truth and should be recorded next to the local count.
//
// # Exact and estimated
//
// Every number is a [Count]: Tokens, a [Method] (Exact or Estimated), a
// Basis naming the rule (the Basis* constants), the Encoding used, and the
// SafetyPercent margin the estimator added.
//
//   - Text is Exact only when tokenized with the model's own encoding: a
//     [Counter] from [Registry.Counter] for a model in the table, or from
//     [Registry.CounterForEncoding] (exact for that encoding; whether it is
//     the model's is the caller's claim).
//   - Message framing and reply priming are Exact only for the snapshots
//     whose framing the cookbook verified against the API
//     (gpt-3.5-turbo-0301, gpt-3.5-turbo-0125, gpt-4-0314, gpt-4-32k-0314,
//     gpt-4-0613, gpt-4-32k-0613, gpt-4o-mini-2024-07-18, gpt-4o-2024-08-06;
//     [Framing.Verified]), and only for messages without tool_call_id.
//     Everywhere else they are Estimated with the cookbook's constants.
//   - Tool schemas and tool calls are always Estimated: the cookbook calls
//     its rule an estimate, and publishes none for tool calls.
//   - Multi-part content is counted part by part. A text part is counted as
//     text; two adjacent text parts cost one more token, Estimated, since
//     no provider publishes how it joins them. An image part is charged by
//     the model family's [ImageRule], and the pixels are never seen: only
//     an image with detail "low" sent to a family with a published fixed
//     low-detail cost (OpenAI's gpt-4o, gpt-4.1, gpt-4.5 and gpt-4-turbo: 85;
//     gpt-4o-mini: 2,833) is Exact. Any other image is charged the family's
//     published maximum (for gpt-4o, 85 + 8 tiles × 170 = 1,445), or
//     [DefaultImageMax] when no rule is known, and labelled Estimated. An
//     image is never counted as the text of its URL.
//   - A sum is Exact only if all of its parts are.
//
// Framing estimates do not include what a provider injects on its own
// (reasoning preambles, the harmony system header of gpt-oss, a Responses
// API wrapper).
//
// # The estimator
//
// A model whose tokenizer is unknown is counted by [Registry.Estimator],
// which runs [Estimate]: a single pass that charges runs of ASCII letters,
// digits, punctuation and whitespace, and other characters by their UTF-8
// length (the rule, version [EstimatorVersion], is on [Estimate]), then
// adds [EstimatorSafetyPercent] (10%) and caps the result at the text's
// byte length, a hard upper bound for byte-level BPE. A test checks, over
// the committed mixed corpus (prose, code, CJK and other scripts, emoji ZWJ
// sequences, CRLF, literal special tokens, long runs, base64), file by file
// and line by line, that it never counts below o200k_base or cl100k_base;
// it runs 1.2–2.3× above them. It is not a guarantee for tokenizers of
// other families.
//
// # Text handling
//
// Encode and Count treat special-token text ("<|endoftext|>") as ordinary
// text, like tiktoken's encode_ordinary. Invalid UTF-8 is counted as the
// text encoding/json would send: each invalid byte becomes U+FFFD. For
// valid UTF-8, Decode(Encode(s)) == s.
//
// # Concurrency
//
// A [Registry], its [Encoding] values and [Counter] values are immutable
// and safe for concurrent use; the package starts no goroutines and does no
// I/O after construction. A built-in encoding's vocabulary is an embedded
// table used in place, ready on first use in about a millisecond (see
// BenchmarkFirstUse) and shared by every registry and session of the
// process. Registering an
// encoding at run time makes a new registry ([Registry.With]); the old one
// is unchanged.
//
// # Usage
//
//	reg, err := tokenizer.New(nil)
//	if err != nil { … }
//	c, err := reg.Counter(model)
//	if errors.Is(err, tokenizer.ErrUnknownModel) {
//		c = reg.Estimator() // explicit: every count says "estimated"
//	}
//	n := c.Count(text)          // e.g. 6 exact (bpe, o200k_base)
//	b := c.CountRequest(&req)   // b.Total, b.Stages (sum == total)
//
// To add a vocabulary shipped with a model:
//
//	f, _ := os.Open("tokenizer.model") // tiktoken format
//	llama, err := tokenizer.NewEncoding(tokenizer.EncodingSpec{
//		Name: "llama3", Ranks: f, Pattern: tokenizer.PatternCl100k,
//		SpecialTokens: map[string]int{"<|begin_of_text|>": 128000},
//	})
//	reg, err = reg.With(&tokenizer.Options{
//		Encodings: []*tokenizer.Encoding{llama},
//		Models:    []tokenizer.Model{{Name: "llama-3.1-", Prefix: true, Encoding: "llama3"}},
//	})
package tokenizer
