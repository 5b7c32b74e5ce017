package tokenizer

import "strings"

// Model maps a model name, or a family of names sharing a prefix, to an
// encoding and a chat framing.
type Model struct {
	// Name is an exact model name ("gpt-4o-2024-08-06") or, with Prefix, a
	// name prefix ("gpt-4o-").
	Name string

	// Prefix makes Name match every model that starts with it. The longest
	// matching prefix wins, so the table's order never matters.
	Prefix bool

	// Encoding is the name of the model's encoding in the registry.
	Encoding string

	// Framing is the model's chat framing. Nil means [DefaultFraming] for
	// the encoding (labelled Estimated).
	Framing *Framing
}

// builtinModels is rlmpl's model → encoding table. Its sources:
//
//   - upstream tiktoken's model.py (MODEL_TO_ENCODING and
//     MODEL_PREFIX_TO_ENCODING) and npm tiktoken 1.0.22's
//     model_to_encoding.json, which lists the dated snapshots;
//   - one rlmpl addition, marked below: the "gpt-5." family prefix
//     (gpt-5.1, gpt-5.2 and their variants), which upstream's "gpt-5-"
//     prefix misses; OpenAI serves them with o200k_base like every model
//     since gpt-4o. Revisit it if OpenAI ships a new encoding.
//
// Names are matched exactly (no case folding, no trimming) after the
// normalisation of [Registry.EncodingForModel]: an "openai/" routing prefix
// is dropped, and a fine-tuned name resolves through its base model.
// NB: keep upstream's trailing "-" on prefixes, so that "gpt-4-" does not
// swallow "gpt-4o" or "gpt-4.1".
var builtinModels = []Model{
	// Reasoning models.
	{Name: "o1", Encoding: O200kBase},
	{Name: "o1-", Prefix: true, Encoding: O200kBase},
	{Name: "o3", Encoding: O200kBase},
	{Name: "o3-", Prefix: true, Encoding: O200kBase},
	{Name: "o4-mini", Encoding: O200kBase},
	{Name: "o4-mini-", Prefix: true, Encoding: O200kBase},

	// Chat models.
	{Name: "gpt-5", Encoding: O200kBase},
	{Name: "gpt-5-", Prefix: true, Encoding: O200kBase},
	{Name: "gpt-5.", Prefix: true, Encoding: O200kBase}, // rlmpl addition
	{Name: "gpt-4.5-", Prefix: true, Encoding: O200kBase},
	{Name: "gpt-4.1", Encoding: O200kBase},
	{Name: "gpt-4.1-", Prefix: true, Encoding: O200kBase},
	{Name: "chatgpt-4o-", Prefix: true, Encoding: O200kBase},
	{Name: "gpt-4o", Encoding: O200kBase},
	{Name: "gpt-4o-", Prefix: true, Encoding: O200kBase},
	{Name: "gpt-4", Encoding: Cl100kBase},
	{Name: "gpt-4-", Prefix: true, Encoding: Cl100kBase},
	{Name: "gpt-3.5-turbo", Encoding: Cl100kBase},
	{Name: "gpt-3.5-turbo-", Prefix: true, Encoding: Cl100kBase},
	{Name: "gpt-3.5", Encoding: Cl100kBase},
	{Name: "gpt-35-turbo", Encoding: Cl100kBase}, // Azure deployment names
	{Name: "gpt-35-turbo-", Prefix: true, Encoding: Cl100kBase},

	// Open-weight models.
	{Name: "gpt-oss-20b", Encoding: O200kHarmony},
	{Name: "gpt-oss-120b", Encoding: O200kHarmony},
	{Name: "gpt-oss-", Prefix: true, Encoding: O200kHarmony},

	// Base and embedding models.
	{Name: "davinci-002", Encoding: Cl100kBase},
	{Name: "babbage-002", Encoding: Cl100kBase},
	{Name: "text-embedding-ada-002", Encoding: Cl100kBase},
	{Name: "text-embedding-3-small", Encoding: Cl100kBase},
	{Name: "text-embedding-3-large", Encoding: Cl100kBase},

	// Deprecated models.
	{Name: "text-davinci-003", Encoding: P50kBase},
	{Name: "text-davinci-002", Encoding: P50kBase},
	{Name: "text-davinci-001", Encoding: R50kBase},
	{Name: "text-curie-001", Encoding: R50kBase},
	{Name: "text-babbage-001", Encoding: R50kBase},
	{Name: "text-ada-001", Encoding: R50kBase},
	{Name: "davinci", Encoding: R50kBase},
	{Name: "curie", Encoding: R50kBase},
	{Name: "babbage", Encoding: R50kBase},
	{Name: "ada", Encoding: R50kBase},
	{Name: "code-davinci-002", Encoding: P50kBase},
	{Name: "code-davinci-001", Encoding: P50kBase},
	{Name: "code-cushman-002", Encoding: P50kBase},
	{Name: "code-cushman-001", Encoding: P50kBase},
	{Name: "davinci-codex", Encoding: P50kBase},
	{Name: "cushman-codex", Encoding: P50kBase},
	{Name: "text-davinci-edit-001", Encoding: P50kEdit},
	{Name: "code-davinci-edit-001", Encoding: P50kEdit},
	{Name: "text-similarity-davinci-001", Encoding: R50kBase},
	{Name: "text-similarity-curie-001", Encoding: R50kBase},
	{Name: "text-similarity-babbage-001", Encoding: R50kBase},
	{Name: "text-similarity-ada-001", Encoding: R50kBase},
	{Name: "text-search-davinci-doc-001", Encoding: R50kBase},
	{Name: "text-search-curie-doc-001", Encoding: R50kBase},
	{Name: "text-search-babbage-doc-001", Encoding: R50kBase},
	{Name: "text-search-ada-doc-001", Encoding: R50kBase},
	{Name: "code-search-babbage-code-001", Encoding: R50kBase},
	{Name: "code-search-ada-code-001", Encoding: R50kBase},

	// Snapshots whose framing the OpenAI cookbook verified against the API
	// (num_tokens_from_messages). Their encoding is the same as the
	// prefix rule's; the entries exist to mark the framing Exact.
	{Name: "gpt-3.5-turbo-0301", Encoding: Cl100kBase, Framing: &Framing{
		PerMessage: 4, PerName: -1, ReplyPriming: 3, Verified: true,
		FuncInit: 10, PropInit: 3, PropKey: 3, EnumInit: -3, EnumItem: 3, FuncEnd: 12,
		PerToolCall: defaultPerToolCall,
	}},
	{Name: "gpt-3.5-turbo-0125", Encoding: Cl100kBase, Framing: verified(Cl100kBase)},
	{Name: "gpt-4-0314", Encoding: Cl100kBase, Framing: verified(Cl100kBase)},
	{Name: "gpt-4-32k-0314", Encoding: Cl100kBase, Framing: verified(Cl100kBase)},
	{Name: "gpt-4-0613", Encoding: Cl100kBase, Framing: verified(Cl100kBase)},
	{Name: "gpt-4-32k-0613", Encoding: Cl100kBase, Framing: verified(Cl100kBase)},
	{Name: "gpt-4o-mini-2024-07-18", Encoding: O200kBase, Framing: verified(O200kBase)},
	{Name: "gpt-4o-2024-08-06", Encoding: O200kBase, Framing: verified(O200kBase)},
}

func verified(encoding string) *Framing {
	f := DefaultFraming(encoding)
	f.Verified = true
	return &f
}

// normalizeModel returns the name to look up for model and whether a
// fine-tune was unwrapped:
//
//   - "openai/gpt-4o" → "gpt-4o" (OpenRouter/LiteLLM routing to OpenAI
//     itself);
//   - "ft:gpt-4o-mini-2024-07-18:org::id" → "gpt-4o-mini-2024-07-18" (a
//     fine-tune uses its base model's tokenizer);
//   - "davinci:ft-org-2023-01-01" → "davinci" (legacy fine-tunes).
func normalizeModel(model string) (string, bool) {
	model = strings.TrimPrefix(model, "openai/")
	if rest, ok := strings.CutPrefix(model, "ft:"); ok {
		base, _, _ := strings.Cut(rest, ":")
		return base, true
	}
	if base, suffix, ok := strings.Cut(model, ":"); ok && strings.HasPrefix(suffix, "ft-") {
		return base, true
	}
	return model, false
}
