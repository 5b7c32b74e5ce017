package provider

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Dialect is a provider's wire format: how a [tokenizer.Request] becomes
// the bytes of a request body, and how the answer — a whole body or an
// event stream, with its usage object (each dialect has its own: usageJSON
// for chat completions, anthropicUsage) — comes back as a [Response]. The request is the
// same for every dialect (the packer renders it, the tokenizer counts it);
// only the bytes differ. A [Client] speaks one dialect, chosen by
// Options.API; a receipt records its name, and a replay renders the same
// bytes again with [Dialect.Body].
//
// The dialects are this package's: [OpenAIChat] (chat completions, spoken
// by OpenAI, OpenRouter, DeepSeek, vLLM, Ollama, llama.cpp) and
// [AnthropicMessages] (Anthropic's Messages API). They are immutable and
// safe for concurrent use.
type Dialect interface {
	// Name is the dialect's name in configuration (api = "...") and in
	// receipts: "openai" or "anthropic".
	Name() string
	// Body returns the exact body bytes of req, streaming or not. It is
	// deterministic: the same request gives the same bytes. The caller
	// owns the returned slice.
	Body(req *tokenizer.Request, stream bool) ([]byte, error)

	// path is the endpoint's path under the API root.
	path() string
	// header sets the dialect's own headers: the credential (key "" sends
	// none) and any version header the caller did not set.
	header(h http.Header, key string)
	// prepare fills what this dialect requires and the caller left unset
	// (a generation cap, the cache's time to live), from the client's
	// options, before the body is rendered.
	prepare(req *tokenizer.Request, o *Options)
	// allowedOptions are the Extra keys accepted when
	// Options.AllowedOptions is empty.
	allowedOptions() []string
	// decodeResponse normalizes a complete 2xx body; status is for error
	// values, sec for their redaction.
	decodeResponse(body []byte, status int, sec secrets) (Response, error)
	// newStream returns the decoder of one event stream.
	newStream() streamDecoder
}

// streamDecoder turns the data of each server-sent event into Deltas,
// which it hands to s (s.emit), and says when the stream is complete.
type streamDecoder interface {
	event(s *streamState, data []byte) (done bool, err error)
	// end is the error of a stream that ended without its final event.
	end() string
}

// Dialect names.
const (
	APIOpenAI    = "openai"
	APIAnthropic = "anthropic"
)

var dialects = map[string]Dialect{APIOpenAI: OpenAIChat, APIAnthropic: AnthropicMessages}

// DialectNamed returns the dialect called name ("" is [OpenAIChat], the
// wire format of receipts written before dialects had names), and false
// for an unknown name.
func DialectNamed(name string) (Dialect, bool) {
	if name == "" {
		return OpenAIChat, true
	}
	d, ok := dialects[name]
	return d, ok
}

// APIs returns the dialect names, sorted.
func APIs() []string {
	names := make([]string, 0, len(dialects))
	for n := range dialects {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// endpointOf is baseURL with the dialect's path, unless it ends with it
// already.
func endpointOf(baseURL string, d Dialect) string {
	ep := strings.TrimRight(baseURL, "/")
	if !strings.HasSuffix(ep, d.path()) {
		ep += d.path()
	}
	return ep
}
