package tokenizer

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Request is one OpenAI-compatible chat-completions request, the single
// request value of rlmpl: the packer renders it, [Counter.CountRequest]
// counts it, and host/provider sends it. Its JSON form is the wire body
// (see [Request.MarshalJSON]), so what is counted is byte for byte what is
// sent, and a request body decodes into it directly.
//
// Pointer fields distinguish "not set" from a zero value (a temperature of
// 0 is meaningful). The generation parameters cost no prompt tokens; they
// are here so that one value travels from the packer to the wire.
type Request struct {
	// Model names the model; "" leaves the choice to the sender (a
	// provider's default model).
	Model    string
	Messages []Message
	Tools    []Tool

	MaxTokens      int // zero means not sent
	Temperature    *float64
	TopP           *float64
	Stop           []string
	Seed           *int64
	ResponseFormat *ResponseFormat

	// Extra holds further top-level body fields (tool_choice, reasoning, a
	// server's grammar, ...) as raw JSON, written after the typed fields in
	// key order. A key must not name a typed field; a sender may restrict
	// the keys further.
	Extra map[string]json.RawMessage

	// Cache marks where the request's stable prefix ends, for providers
	// that cache a prompt only up to positions a request marks
	// (Anthropic's cache_control). It is not part of the OpenAI body,
	// whose servers cache every prefix on their own, and costs no tokens.
	Cache CacheHints
}

// CacheHints mark the prefixes of a request worth caching.
type CacheHints struct {
	// Breakpoints are message indices, ascending and distinct: each is the
	// last message of a prefix (with the tools and system messages before
	// it) that the next request will repeat. Providers take a few at most
	// (Anthropic: 4).
	Breakpoints []int `json:"breakpoints"`
	// TTL is how long the provider keeps what is cached: "" its default,
	// or a duration it names ("5m", "1h").
	TTL string `json:"ttl,omitempty"`
}

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message. Content holds plain text; Parts, when
// non-empty, replaces it with multi-part content (Content must then be
// empty), sent as an array of parts and counted part by part (see
// [Counter.CountRequest]).
type Message struct {
	Role       string
	Content    string
	Parts      []Part
	Name       string
	ToolCalls  []ToolCall // an assistant's calls
	ToolCallID string     // the call a tool result answers

	// Reasoning is the assistant's reasoning, when a provider returned it.
	// It is kept in histories but, unsigned, neither sent nor counted:
	// DeepSeek rejects reasoning_content in input messages.
	Reasoning string
	// ReasoningSignature is the provider's signature of Reasoning
	// (Anthropic's signed thinking block, which the API wants back before
	// the tool calls it led to). A signed reasoning is counted, and sent by
	// the dialects that take it back; the OpenAI body never carries it.
	ReasoningSignature string
}

// Content part types.
const (
	PartText     = "text"
	PartImageURL = "image_url"
)

// Image detail levels of a [PartImageURL] part. The empty detail is sent as
// absent, which providers treat as [DetailAuto].
const (
	DetailAuto = "auto"
	DetailLow  = "low"
	DetailHigh = "high"
)

// Part is one element of multi-part content: a text fragment or an image
// reference (an https URL or a data: URL).
type Part struct {
	Type     string // PartText or PartImageURL
	Text     string
	ImageURL string
	Detail   string // "", DetailAuto, DetailLow or DetailHigh
}

// TextPart returns a text content part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// ImagePart returns an image content part; detail is "", [DetailAuto],
// [DetailLow] or [DetailHigh].
func ImagePart(url, detail string) Part {
	return Part{Type: PartImageURL, ImageURL: url, Detail: detail}
}

// ToolCall is one call in an assistant message's tool_calls.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"` // "function"; "" is sent as "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function a [ToolCall] invokes. Arguments is the JSON
// text the model produced, kept (and counted) as it is: models emit invalid
// JSON, and the caller decides what to do with it.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is one entry of a request's tools.
type Tool struct {
	Type     string      `json:"type,omitempty"` // "function"; "" is sent as "function"
	Function FunctionDef `json:"function"`
}

// FunctionDef is a tool's function definition. Parameters is its JSON
// Schema, kept as raw JSON.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ResponseFormat constrains the shape of the model's text.
type ResponseFormat struct {
	// Type is "text", "json_object" or "json_schema".
	Type string `json:"type"`
	// JSONSchema is required when Type is "json_schema".
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is the json_schema response format: the model's text must be a
// JSON value matching Schema.
type JSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// Text returns the message's text: Content, or its text parts joined.
func (m Message) Text() string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var sb strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

// LastUserText returns the text of the last user message, or "" when there
// is none: the "prompt" of a request for callers that see requests as one
// prompt (a Prolog model_handler).
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// Clone returns a deep copy of r, so a kept request (a recording, a
// scripted test's log) cannot change when the caller reuses its slices.
// Raw JSON values (schemas, Extra values) are shared: they are never
// modified in place.
func (r Request) Clone() Request {
	c := r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.Parts = slices.Clone(m.Parts)
		m.ToolCalls = slices.Clone(m.ToolCalls)
		c.Messages[i] = m
	}
	c.Tools = slices.Clone(r.Tools)
	c.Stop = slices.Clone(r.Stop)
	if r.Temperature != nil {
		c.Temperature = new(*r.Temperature)
	}
	if r.TopP != nil {
		c.TopP = new(*r.TopP)
	}
	if r.Seed != nil {
		c.Seed = new(*r.Seed)
	}
	if r.ResponseFormat != nil {
		f := *r.ResponseFormat
		if f.JSONSchema != nil {
			f.JSONSchema = new(*f.JSONSchema)
		}
		c.ResponseFormat = &f
	}
	c.Extra = maps.Clone(r.Extra)
	c.Cache.Breakpoints = slices.Clone(r.Cache.Breakpoints)
	return c
}
