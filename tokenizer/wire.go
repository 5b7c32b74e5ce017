package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// The wire format: the OpenAI chat-completions body. These methods are the
// only encoding of a request, so that the bytes a provider sends are the
// bytes the packer rendered and the tokenizer counted.

// wireRequest is a Request's typed fields in body order, with messages as
// sent (M is wireMessage) or as decoded (M is Message).
type wireRequest[M any] struct {
	Model          string          `json:"model,omitempty"`
	Messages       []M             `json:"messages"`
	Tools          []Tool          `json:"tools,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	TopP           *float64        `json:"top_p,omitempty"`
	Stop           []string        `json:"stop,omitempty"`
	Seed           *int64          `json:"seed,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

// wireMessage is a Message as sent. Content is a string, a []Part, or nil
// (an assistant turn that only calls tools).
type wireMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// typedFields maps the body fields that Request's typed fields own (and
// that Extra therefore may not set) to those fields.
var typedFields = map[string]string{
	"model": "Model", "messages": "Messages", "tools": "Tools", "max_tokens": "MaxTokens",
	"temperature": "Temperature", "top_p": "TopP", "stop": "Stop", "seed": "Seed",
	"response_format": "ResponseFormat",
}

// TypedField returns the name of the [Request] field that owns the body
// field key ("MaxTokens" for "max_tokens"), and false when Request.Extra may
// carry key.
func TypedField(key string) (string, bool) {
	f, ok := typedFields[key]
	return f, ok
}

// MarshalJSON writes the wire body: model (when set), messages, tools,
// max_tokens, temperature, top_p, stop, seed and response_format as set,
// then the Extra fields in key order. A message's content is a string, an
// array of parts when it has parts, or null for an assistant message with
// tool calls and no text; an empty tool or tool-call type is written as
// "function"; reasoning is not written. The encoding is deterministic. It
// fails for an Extra key that names a typed field, an Extra value that is
// not valid JSON, or a part of unknown type.
func (r Request) MarshalJSON() ([]byte, error) {
	w := wireRequest[wireMessage]{Model: r.Model, Messages: make([]wireMessage, len(r.Messages)), Tools: wireTools(r.Tools),
		MaxTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP, Stop: r.Stop, Seed: r.Seed,
		ResponseFormat: r.ResponseFormat}
	for i := range r.Messages {
		w.Messages[i] = r.Messages[i].wire()
	}
	body, err := json.Marshal(w)
	if err != nil || len(r.Extra) == 0 {
		return body, err
	}
	keys := make([]string, 0, len(r.Extra))
	for k, v := range r.Extra {
		if _, typed := typedFields[k]; typed {
			return nil, fmt.Errorf("tokenizer: Request.Extra[%q]: set through the typed field", k)
		}
		if !json.Valid(v) {
			return nil, fmt.Errorf("tokenizer: Request.Extra[%q]: not valid JSON", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	body = body[:len(body)-1] // drop '}'
	for _, k := range keys {
		body = append(body, ',')
		body = strconv.AppendQuote(body, k)
		body = append(body, ':')
		body = append(body, r.Extra[k]...)
	}
	return append(body, '}'), nil
}

// UnmarshalJSON reads a wire body. Fields without a typed counterpart go to
// Extra, except stream and stream_options, which belong to the transport.
func (r *Request) UnmarshalJSON(b []byte) error {
	var w wireRequest[Message]
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*r = Request{Model: w.Model, Messages: w.Messages, Tools: w.Tools, MaxTokens: w.MaxTokens,
		Temperature: w.Temperature, TopP: w.TopP, Stop: w.Stop, Seed: w.Seed, ResponseFormat: w.ResponseFormat}
	for k, v := range all {
		if _, typed := typedFields[k]; typed || k == "stream" || k == "stream_options" {
			continue
		}
		if r.Extra == nil {
			r.Extra = make(map[string]json.RawMessage)
		}
		r.Extra[k] = v
	}
	return nil
}

// wire returns the message as sent.
func (m *Message) wire() wireMessage {
	w := wireMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	switch {
	case len(m.Parts) > 0:
		w.Content = m.Parts
	case m.Content == "" && len(m.ToolCalls) > 0:
		w.Content = nil
	default:
		w.Content = m.Content
	}
	if slices.ContainsFunc(m.ToolCalls, func(c ToolCall) bool { return c.Type == "" }) {
		w.ToolCalls = slices.Clone(m.ToolCalls)
		for i := range w.ToolCalls {
			if w.ToolCalls[i].Type == "" {
				w.ToolCalls[i].Type = "function"
			}
		}
	}
	return w
}

// wireTools returns tools with an empty type written as "function".
func wireTools(tools []Tool) []Tool {
	if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Type == "" }) {
		return tools
	}
	out := slices.Clone(tools)
	for i := range out {
		if out[i].Type == "" {
			out[i].Type = "function"
		}
	}
	return out
}

// MarshalJSON writes the message as it appears in a request body (see
// [Request.MarshalJSON]).
func (m Message) MarshalJSON() ([]byte, error) { return json.Marshal(m.wire()) }

// UnmarshalJSON reads a message of a request body: content as a string,
// null or an array of text and image_url parts.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, Name: w.Name, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	switch {
	case len(w.Content) == 0 || string(w.Content) == "null":
	case w.Content[0] == '[':
		return json.Unmarshal(w.Content, &m.Parts)
	default:
		return json.Unmarshal(w.Content, &m.Content)
	}
	return nil
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// MarshalJSON writes {"type":"text","text":T} or
// {"type":"image_url","image_url":{"url":U,"detail":D}}.
func (p Part) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case PartText:
		return json.Marshal(wirePart{Type: p.Type, Text: &p.Text})
	case PartImageURL:
		return json.Marshal(wirePart{Type: p.Type, ImageURL: &wireImageURL{URL: p.ImageURL, Detail: p.Detail}})
	}
	return nil, fmt.Errorf("tokenizer: unsupported content part type %q", p.Type)
}

// UnmarshalJSON reads the form [Part.MarshalJSON] writes.
func (p *Part) UnmarshalJSON(b []byte) error {
	var w wirePart
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Part{Type: w.Type}
	switch {
	case w.Type == PartText && w.Text != nil:
		p.Text = *w.Text
	case w.Type == PartImageURL && w.ImageURL != nil:
		p.ImageURL, p.Detail = w.ImageURL.URL, w.ImageURL.Detail
	default:
		return errors.New("tokenizer: a content part is {type:text, text} or {type:image_url, image_url:{url, detail}}")
	}
	return nil
}
