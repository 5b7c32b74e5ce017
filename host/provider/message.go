package provider

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Role is the author of a [Message].
type Role string

// Roles accepted by [Request] validation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

func (r Role) valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// PartType is the type of one content [Part].
type PartType string

// Content part types.
const (
	PartText     PartType = "text"
	PartImageURL PartType = "image_url"
)

// Image detail levels for [PartImageURL] parts. The empty detail is sent as
// absent, which providers treat as [DetailAuto].
const (
	DetailAuto = "auto"
	DetailLow  = "low"
	DetailHigh = "high"
)

// Part is one element of a multi-part message content: a text fragment or an
// image reference (an https URL or a data: URL).
type Part struct {
	Type     PartType `json:"type"`
	Text     string   `json:"text,omitempty"`
	ImageURL string   `json:"image_url,omitempty"`
	Detail   string   `json:"detail,omitempty"` // "", auto, low or high
}

// TextPart returns a text content part.
func TextPart(text string) Part { return Part{Type: PartText, Text: text} }

// ImagePart returns an image content part; detail is "", [DetailAuto],
// [DetailLow] or [DetailHigh].
func ImagePart(url, detail string) Part {
	return Part{Type: PartImageURL, ImageURL: url, Detail: detail}
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, exactly as the model
	// produced it. It is not validated: models emit invalid JSON, and the
	// caller decides what to do with it.
	Arguments string `json:"arguments"`
}

// Message is one chat message. Content holds plain text; Parts, when
// non-empty, replaces it with multi-part content (and Content must then be
// empty).
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	Parts      []Part     `json:"parts,omitempty"`
	Name       string     `json:"name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // for RoleTool results
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // for RoleAssistant
	// Reasoning is the assistant's reasoning, when a provider returned it.
	// It is kept for histories and recordings but not sent back: DeepSeek
	// rejects reasoning_content in input messages.
	Reasoning string `json:"reasoning,omitempty"`
}

// Tool describes one function the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // a JSON Schema object
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

// Request is one chat-completion request. Pointer fields distinguish "not
// set" from a zero value (a temperature of 0 is meaningful).
type Request struct {
	// Model overrides the provider's default model when non-empty.
	Model     string    `json:"model,omitempty"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	MaxTokens int       `json:"max_tokens,omitempty"` // zero means not sent

	Temperature    *float64        `json:"temperature,omitempty"`
	TopP           *float64        `json:"top_p,omitempty"`
	Stop           []string        `json:"stop,omitempty"`
	Seed           *int64          `json:"seed,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`

	// Extra holds further generation options sent as top-level body fields
	// (tool_choice, reasoning, a server's grammar, ...). Each key must be in
	// the provider's allowed options and must not name a field that has a
	// typed counterpart above; each value must be valid JSON.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// Float returns a pointer to v, for [Request.Temperature] and [Request.TopP].
func Float(v float64) *float64 { return &v }

// Int returns a pointer to v, for [Request.Seed].
func Int(v int64) *int64 { return &v }

// typedKeys are body fields owned by typed Request fields or by the client;
// Extra may not set them.
var typedKeys = map[string]string{
	"model": "Request.Model", "messages": "Request.Messages", "tools": "Request.Tools",
	"max_tokens": "Request.MaxTokens", "temperature": "Request.Temperature",
	"top_p": "Request.TopP", "stop": "Request.Stop", "seed": "Request.Seed",
	"response_format": "Request.ResponseFormat", "stream": "Provider.Stream",
	"stream_options": "Provider.Stream",
}

// Validate reports the first problem with r as a [*Error] of kind
// [KindInvalidRequest], or nil. It does not check Extra keys against an
// allow-list (that is the provider's policy) nor require a model.
func (r *Request) Validate() error {
	if len(r.Messages) == 0 {
		return invalidf("messages", "must be a non-empty list")
	}
	for i, m := range r.Messages {
		field := "messages[" + strconv.Itoa(i) + "]"
		if !m.Role.valid() {
			return invalidf(field+".role", "must be system, user, assistant or tool (got %q)", m.Role)
		}
		if m.Content != "" && len(m.Parts) > 0 {
			return invalidf(field, "has both Content and Parts")
		}
		for j, p := range m.Parts {
			pf := field + ".parts[" + strconv.Itoa(j) + "]"
			switch p.Type {
			case PartText:
				if p.ImageURL != "" || p.Detail != "" {
					return invalidf(pf, "a text part has image fields")
				}
			case PartImageURL:
				if p.ImageURL == "" {
					return invalidf(pf+".image_url", "must be non-empty")
				}
				switch p.Detail {
				case "", DetailAuto, DetailLow, DetailHigh:
				default:
					return invalidf(pf+".detail", "must be auto, low or high (got %q)", p.Detail)
				}
				if p.Text != "" {
					return invalidf(pf, "an image part has text")
				}
			default:
				return invalidf(pf+".type", "unsupported content part type %q", p.Type)
			}
		}
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return invalidf(field+".tool_calls", "only assistant messages carry tool calls")
		}
		for j, tc := range m.ToolCalls {
			if tc.Name == "" {
				return invalidf(field+".tool_calls["+strconv.Itoa(j)+"].name", "must be non-empty")
			}
		}
	}
	for i, t := range r.Tools {
		field := "tools[" + strconv.Itoa(i) + "]"
		if t.Name == "" {
			return invalidf(field+".name", "must be non-empty")
		}
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return invalidf(field+".parameters", "is not valid JSON")
		}
	}
	if r.MaxTokens < 0 {
		return invalidf("max_tokens", "must be >= 0 (got %d)", r.MaxTokens)
	}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.JSONSchema == nil || f.JSONSchema.Name == "" || !json.Valid(f.JSONSchema.Schema) {
				return invalidf("response_format.json_schema", "needs a name and a valid JSON schema")
			}
		default:
			return invalidf("response_format.type", "must be text, json_object or json_schema (got %q)", f.Type)
		}
	}
	for k, v := range r.Extra {
		if owner, ok := typedKeys[k]; ok {
			return invalidf("extra."+k, "is set through %s, not Extra", owner)
		}
		if !json.Valid(v) {
			return invalidf("extra."+k, "is not valid JSON")
		}
	}
	return nil
}

func invalidf(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidRequest, Message: "request." + field + ": " + fmt.Sprintf(format, args...)}
}

// clone returns a deep copy of r, so a recorded request cannot change when
// the caller reuses its slices.
func (r Request) clone() Request {
	c := r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.Parts = append([]Part(nil), m.Parts...)
		m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
		c.Messages[i] = m
	}
	c.Tools = append([]Tool(nil), r.Tools...)
	c.Stop = append([]string(nil), r.Stop...)
	if r.Temperature != nil {
		c.Temperature = Float(*r.Temperature)
	}
	if r.TopP != nil {
		c.TopP = Float(*r.TopP)
	}
	if r.Seed != nil {
		c.Seed = Int(*r.Seed)
	}
	if r.ResponseFormat != nil {
		f := *r.ResponseFormat
		if f.JSONSchema != nil {
			s := *f.JSONSchema
			f.JSONSchema = &s
		}
		c.ResponseFormat = &f
	}
	if r.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(r.Extra))
		for k, v := range r.Extra {
			c.Extra[k] = v
		}
	}
	return c
}

// Text returns the message's text: Content, or the text parts joined.
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
