package tokenizer

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test for them with [errors.Is]; the returned errors wrap
// them with the offending name.
var (
	// ErrUnknownEncoding reports an encoding name the registry does not hold.
	ErrUnknownEncoding = errors.New("tokenizer: unknown encoding")

	// ErrUnknownModel reports a model name the registry's model table does
	// not map to an encoding. Callers that want a number anyway use
	// [Registry.Estimator], whose counts are labelled [Estimated].
	ErrUnknownModel = errors.New("tokenizer: unknown model")

	// ErrInvalidToken reports a token ID that is not in the encoding's
	// vocabulary or special tokens (from [Encoding.Decode]).
	ErrInvalidToken = errors.New("tokenizer: invalid token id")
)

// Method says how a [Count] was obtained.
type Method int

const (
	// Exact means the text was tokenized with the model's own encoding (or,
	// for a chat-framing stage, that the stage follows a rule verified
	// against the provider for this exact model snapshot).
	Exact Method = iota + 1

	// Estimated means the number is a rule of thumb: the conservative
	// estimator of [Estimate], or a published chat-framing or tool-schema
	// heuristic. A sum is Estimated as soon as one part is.
	Estimated

	// CallerSupplied means the number came from the caller's own counter
	// ([CallerCounter]): the host cannot vouch for it. A sum with no
	// Estimated part is CallerSupplied as soon as one part is.
	CallerSupplied
)

// String returns "exact", "estimated", "caller_supplied", or "Method(N)"
// for an invalid value.
func (m Method) String() string {
	switch m {
	case Exact:
		return "exact"
	case Estimated:
		return "estimated"
	case CallerSupplied:
		return "caller_supplied"
	default:
		return fmt.Sprintf("Method(%d)", int(m))
	}
}

// Basis values: short, stable identifiers of the rule behind a [Count]. They
// are meant to be recorded in ledgers and receipts next to the number.
const (
	// BasisBPE: the text was tokenized with [Count.Encoding].
	BasisBPE = "bpe"
	// BasisEstimator: the conservative estimator (see [Estimate]).
	BasisEstimator = "estimator:" + EstimatorVersion
	// BasisMessageFraming: per-message and per-name overhead, from the
	// OpenAI cookbook's num_tokens_from_messages.
	BasisMessageFraming = "cookbook:num_tokens_from_messages"
	// BasisToolSchemas: tool/function definitions, from the OpenAI
	// cookbook's num_tokens_for_tools.
	BasisToolSchemas = "cookbook:num_tokens_for_tools"
	// BasisToolCalls: an assistant message's tool calls, by rlmpl's rule
	// (see [Framing.PerToolCall]); the cookbook publishes none.
	BasisToolCalls = "rlmpl:tool_calls"
	// BasisReplyPriming: the tokens that prime the assistant's reply.
	BasisReplyPriming = "cookbook:reply_priming"
	// BasisParts: multi-part content, text parts tokenized as text and
	// image parts charged by the model's [ImageRule].
	BasisParts = "rlmpl:content_parts"
	// BasisResponseFormat: a request's response_format, by its framing's
	// rule ([Framing].SchemaFree).
	BasisResponseFormat = "rlmpl:response_format"
	// BasisCaller: the caller's own counter ([CallerCounter]).
	BasisCaller = "registered_counter"
	// BasisSum: the total of a [Breakdown]'s stages.
	BasisSum = "sum"
	// BasisCalibrated: the estimator scaled by a ratio learnt from the
	// prompt counts a provider reported (see [Counter.Calibrated]).
	BasisCalibrated = "calibrated:" + EstimatorVersion
)

// Count is a token count with its provenance.
type Count struct {
	// Tokens is the number of tokens. For an Estimated count made by the
	// estimator it already includes the SafetyPercent margin.
	Tokens int

	// Method is Exact or Estimated.
	Method Method

	// Basis names the rule behind the number; one of the Basis* constants.
	Basis string

	// Encoding is the encoding used to tokenize text, or "" when no
	// tokenizer took part (the pure estimator, a constant overhead).
	Encoding string

	// SafetyPercent is the margin, in percent, that the estimator added on
	// top of its raw figure (0 for exact counts and for published
	// heuristics, which carry no margin). For a sum it is the largest
	// margin of any part.
	SafetyPercent int
}

// String renders the count for logs, e.g. "101 exact (sum, o200k_base)".
func (c Count) String() string {
	s := fmt.Sprintf("%d %s (%s", c.Tokens, c.Method, c.Basis)
	if c.Encoding != "" {
		s += ", " + c.Encoding
	}
	if c.SafetyPercent != 0 {
		s += fmt.Sprintf(", +%d%%", c.SafetyPercent)
	}
	return s + ")"
}

// add accumulates part into c. The method degrades to Estimated as soon as
// one part is estimated; an empty c takes part's method.
func (c *Count) add(part Count) {
	c.Tokens += part.Tokens
	if c.Method == 0 || part.Method == Estimated || part.Method == CallerSupplied && c.Method == Exact {
		c.Method = part.Method
	}
	c.SafetyPercent = max(c.SafetyPercent, part.SafetyPercent)
}
