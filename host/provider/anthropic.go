package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// AnthropicMessages is Anthropic's Messages API (POST /messages, the
// x-api-key and anthropic-version headers). A request renders as:
//
//   - system: the request's leading system messages, as text blocks (a
//     system message after the conversation has begun is a user text
//     block: the API has no system role in messages);
//   - messages: user and assistant turns of content blocks, consecutive
//     messages of one role in one turn — so the results of consecutive
//     tool calls are tool_result blocks of one user turn, as the API
//     requires; text and image parts (an https URL, or a data: URL sent
//     as base64), an assistant's tool calls as tool_use blocks with their
//     arguments as input (arguments that are not a JSON object are sent
//     as {"arguments": TEXT}), led by its signed reasoning as a thinking
//     block; empty text is left out, and so is a message with nothing
//     left;
//   - tools with input_schema (an empty schema is an object without
//     properties), max_tokens always (Options.MaxTokens when the request
//     sets none), temperature, top_p, stop_sequences, then Extra (metadata,
//     service_tier, thinking, tool_choice, top_k: Anthropic's own forms) in
//     key order;
//   - cache_control on the block that ends each of the request's cache
//     breakpoints ([tokenizer.Request].Cache, at most 4), with its TTL.
//
// A seed or a response format other than text cannot be expressed and is
// refused before anything is sent. Answers decode to one [Response]:
// text blocks as the content, thinking blocks as the reasoning (with
// their signature, to be sent back with the tool calls), tool_use
// blocks as tool calls; stop reasons in the chat-completions vocabulary
// (end_turn and stop_sequence are stop, max_tokens is length, tool_use is
// tool_calls, refusal is content_filter, others as sent); the usage's
// input, cache-read and cache-write tokens sum to the prompt tokens. The
// stream's events (message_start, content_block_start and _delta with
// text_delta, input_json_delta and thinking_delta, message_delta with the
// stop reason and usage, message_stop, error) deliver the same Deltas as
// a chat-completions stream. An overloaded_error (529), api_error or
// rate_limit_error is retryable, mid-stream too.
var AnthropicMessages Dialect = anthropicMessages{}

type anthropicMessages struct{}

// anthropicVersion is the API version the dialect speaks; a caller may
// send another through Options.Headers.
const anthropicVersion = "2023-06-01"

// anthropicMaxBreakpoints is how many blocks may carry cache_control.
const anthropicMaxBreakpoints = 4

func (anthropicMessages) Name() string { return APIAnthropic }

func (anthropicMessages) path() string { return "/messages" }

func (anthropicMessages) header(h http.Header, key string) {
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	if h.Get("Anthropic-Version") == "" {
		h.Set("Anthropic-Version", anthropicVersion)
	}
}

func (anthropicMessages) prepare(req *tokenizer.Request, o *Options) {
	if req.MaxTokens == 0 {
		req.MaxTokens = o.MaxTokens
	}
	if len(req.Cache.Breakpoints) > 0 && req.Cache.TTL == "" {
		req.Cache.TTL = o.CacheTTL
	}
}

func (anthropicMessages) allowedOptions() []string {
	return []string{"metadata", "service_tier", "thinking", "tool_choice", "top_k"}
}

func (anthropicMessages) newStream() streamDecoder {
	return &anthropicStream{tools: map[int]*streamTool{}}
}

// Request body.

type anthropicBody struct {
	Model         string             `json:"model,omitempty"`
	MaxTokens     int                `json:"max_tokens"`
	System        []*anthropicBlock  `json:"system,omitempty"`
	Messages      []anthropicMessage `json:"messages"`
	Tools         []anthropicTool    `json:"tools,omitempty"`
	Temperature   *float64           `json:"temperature,omitempty"`
	TopP          *float64           `json:"top_p,omitempty"`
	StopSequences []string           `json:"stop_sequences,omitempty"`
}

type anthropicMessage struct {
	Role    string            `json:"role"`
	Content []*anthropicBlock `json:"content"`
}

// anthropicBlock is one content block of any type; the fields of other
// types are left empty.
type anthropicBlock struct {
	Type         string          `json:"type"`
	Thinking     string          `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Text         string          `json:"text,omitempty"`
	Source       *imageSource    `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      any             `json:"content,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"` // base64 or url
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Body renders req as a Messages API body: see [AnthropicMessages]. The
// request should be valid ([Validate]); what the API cannot express is a
// [KindInvalidRequest] error.
func (anthropicMessages) Body(req *tokenizer.Request, stream bool) ([]byte, error) {
	if req.Seed != nil {
		return nil, invalidf("seed", "the anthropic API takes no seed")
	}
	if f := req.ResponseFormat; f != nil && f.Type != "text" {
		return nil, invalidf("response_format", "the anthropic API takes no %s response format", f.Type)
	}
	if n := len(req.Cache.Breakpoints); n > anthropicMaxBreakpoints {
		return nil, invalidf("cache.breakpoints", "the anthropic API takes at most %d (got %d)", anthropicMaxBreakpoints, n)
	}
	b := anthropicBody{Model: req.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, StopSequences: req.Stop}
	// last[i] is the block that ends message i (nil when it has none):
	// where a breakpoint after message i puts its cache_control.
	last := make([]*anthropicBlock, len(req.Messages))
	i := 0
	for ; i < len(req.Messages) && req.Messages[i].Role == tokenizer.RoleSystem; i++ {
		m := req.Messages[i]
		blocks, err := contentBlocks(&m, "messages["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		for _, bl := range blocks {
			if bl.Type != "text" {
				return nil, invalidf("messages["+strconv.Itoa(i)+"]", "a system message is text only")
			}
		}
		b.System = append(b.System, blocks...)
		if len(b.System) > 0 {
			last[i] = b.System[len(b.System)-1]
		}
	}
	for ; i < len(req.Messages); i++ {
		m := &req.Messages[i]
		blocks, err := messageBlocks(m, "messages["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		if len(blocks) > 0 {
			role := tokenizer.RoleUser
			if m.Role == tokenizer.RoleAssistant {
				role = tokenizer.RoleAssistant
			}
			if n := len(b.Messages); n > 0 && b.Messages[n-1].Role == role {
				b.Messages[n-1].Content = append(b.Messages[n-1].Content, blocks...)
			} else {
				b.Messages = append(b.Messages, anthropicMessage{Role: role, Content: blocks})
			}
			last[i] = blocks[len(blocks)-1]
		} else if i > 0 {
			last[i] = last[i-1]
		}
	}
	if len(b.Messages) == 0 {
		return nil, invalidf("messages", "needs a user or assistant message with content besides the system messages")
	}
	for _, bp := range req.Cache.Breakpoints {
		if bp >= 0 && bp < len(last) && last[bp] != nil {
			last[bp].CacheControl = &cacheControl{Type: "ephemeral", TTL: req.Cache.TTL}
		}
	}
	for _, t := range req.Tools {
		schema := t.Function.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		b.Tools = append(b.Tools, anthropicTool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: schema})
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, invalidf("", "cannot encode: %v", err)
	}
	return appendFields(body, req.Extra, stream)
}

// appendFields appends Extra's fields in key order, then "stream":true
// for a stream, to a JSON object.
func appendFields(body []byte, extra map[string]json.RawMessage, stream bool) ([]byte, error) {
	keys := make([]string, 0, len(extra))
	for k, v := range extra {
		if owner := extraOwner(k); owner != "" || anthropicTyped[k] {
			return nil, invalidf("extra."+k, "is a typed field of the request, not Extra")
		}
		if !json.Valid(v) {
			return nil, invalidf("extra."+k, "is not valid JSON")
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	body = body[:len(body)-1] // drop '}'
	for _, k := range keys {
		body = append(body, ',')
		body = strconv.AppendQuote(body, k)
		body = append(body, ':')
		var buf bytes.Buffer
		if json.Compact(&buf, extra[k]) != nil {
			return nil, invalidf("extra."+k, "is not valid JSON")
		}
		body = append(body, buf.Bytes()...)
	}
	if stream {
		body = append(body, `,"stream":true`...)
	}
	return append(body, '}'), nil
}

// anthropicTyped are the body fields the dialect writes itself.
var anthropicTyped = map[string]bool{"system": true, "stop_sequences": true}

// contentBlocks are a message's text and image parts as blocks; empty
// text is left out.
func contentBlocks(m *tokenizer.Message, field string) ([]*anthropicBlock, error) {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil, nil
		}
		return []*anthropicBlock{{Type: "text", Text: m.Content}}, nil
	}
	var out []*anthropicBlock
	for j, p := range m.Parts {
		switch p.Type {
		case tokenizer.PartText:
			if p.Text != "" {
				out = append(out, &anthropicBlock{Type: "text", Text: p.Text})
			}
		case tokenizer.PartImageURL:
			src, err := imageSourceOf(p.ImageURL)
			if err != nil {
				return nil, invalidf(field+".parts["+strconv.Itoa(j)+"].image_url", "%v", err)
			}
			out = append(out, &anthropicBlock{Type: "image", Source: src})
		default:
			return nil, invalidf(field+".parts["+strconv.Itoa(j)+"].type", "unsupported content part type %q", p.Type)
		}
	}
	return out, nil
}

// messageBlocks are the blocks of a message after the system prefix.
func messageBlocks(m *tokenizer.Message, field string) ([]*anthropicBlock, error) {
	content, err := contentBlocks(m, field)
	if err != nil {
		return nil, err
	}
	switch m.Role {
	case tokenizer.RoleTool:
		tr := &anthropicBlock{Type: "tool_result", ToolUseID: m.ToolCallID}
		switch {
		case len(m.Parts) > 0 && len(content) > 0:
			tr.Content = content
		case m.Content != "":
			tr.Content = m.Content
		}
		return []*anthropicBlock{tr}, nil
	case tokenizer.RoleAssistant:
		if m.ReasoningSignature != "" { // the signed thinking that led to this turn, first
			content = append([]*anthropicBlock{{Type: "thinking", Thinking: m.Reasoning, Signature: m.ReasoningSignature}}, content...)
		}
		for _, tc := range m.ToolCalls {
			content = append(content, &anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: toolInput(tc.Function.Arguments)})
		}
	}
	return content, nil
}

// toolInput is a tool call's arguments as the object the API wants: the
// JSON object itself, {} for none, else {"arguments": TEXT} (models emit
// invalid JSON, and the call was made with it).
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage(`{}`)
	}
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(map[string]string{"arguments": args})
	return b
}

// imageSourceOf is an image part's source: base64 data from a data: URL,
// or the URL itself.
func imageSourceOf(u string) (*imageSource, error) {
	rest, isData := strings.CutPrefix(u, "data:")
	if !isData {
		if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			return nil, fmt.Errorf("must be an http(s) URL or a data: URL")
		}
		return &imageSource{Type: "url", URL: u}, nil
	}
	meta, data, ok := strings.Cut(rest, ",")
	media, isBase64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isBase64 || media == "" {
		return nil, fmt.Errorf("a data: URL must be data:MEDIA_TYPE;base64,DATA")
	}
	return &imageSource{Type: "base64", MediaType: media, Data: data}, nil
}

// Responses.

type anthropicReply struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Model      string            `json:"model"`
	Content    []anthropicOutput `json:"content"`
	StopReason *string           `json:"stop_reason"`
	Usage      *anthropicUsage   `json:"usage"`
	Error      json.RawMessage   `json:"error"`
}

// anthropicOutput is a content block of an answer.
type anthropicOutput struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// anthropicUsage is the usage object: input_tokens excludes the tokens
// read from and written to the cache.
type anthropicUsage struct {
	InputTokens              *float64 `json:"input_tokens"`
	OutputTokens             *float64 `json:"output_tokens"`
	CacheCreationInputTokens *float64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *float64 `json:"cache_read_input_tokens"`
}

// merge overlays the fields o reports (a stream's message_delta carries
// cumulative counts).
func (u *anthropicUsage) merge(o *anthropicUsage) {
	for _, f := range []struct{ dst, src **float64 }{{&u.InputTokens, &o.InputTokens}, {&u.OutputTokens, &o.OutputTokens},
		{&u.CacheCreationInputTokens, &o.CacheCreationInputTokens}, {&u.CacheReadInputTokens, &o.CacheReadInputTokens}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
}

// usage is u in [Usage]'s terms: the prompt is input plus cache reads and
// writes.
func (u *anthropicUsage) usage() Usage {
	var r Usage
	if u == nil {
		return r
	}
	n := func(p *float64) int {
		if p == nil {
			return 0
		}
		return int(*p)
	}
	if u.InputTokens != nil {
		r.PromptTokens, r.PromptKnown = n(u.InputTokens)+n(u.CacheReadInputTokens)+n(u.CacheCreationInputTokens), true
	}
	if u.OutputTokens != nil {
		r.CompletionTokens, r.CompletionKnown = n(u.OutputTokens), true
	}
	if r.PromptKnown && r.CompletionKnown {
		r.TotalTokens, r.TotalKnown = r.PromptTokens+r.CompletionTokens, true
	}
	if u.CacheReadInputTokens != nil {
		r.CachedTokens, r.CachedKnown = n(u.CacheReadInputTokens), true
	}
	if u.CacheCreationInputTokens != nil {
		r.CacheWriteTokens, r.CacheWriteKnown = n(u.CacheCreationInputTokens), true
	}
	return r
}

// stopReason maps a stop reason to the chat-completions vocabulary.
func stopReason(r string) string {
	switch r {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return r
}

// anthropicError is the error of an error object ({"type":...,
// "message":...}) in a body or a stream.
func anthropicError(raw json.RawMessage, status int, sec secrets) *Error {
	var o struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) != nil {
		o.Message = string(raw)
	}
	e := &Error{Kind: KindProviderError, Status: status, Type: redact(o.Type, sec), Message: redact(o.Message, sec)}
	switch o.Type {
	case "overloaded_error", "api_error", "rate_limit_error":
		e.Retryable = true
	}
	contextLength(e)
	return e
}

func (anthropicMessages) decodeResponse(body []byte, status int, sec secrets) (Response, error) {
	var w anthropicReply
	if err := json.Unmarshal(body, &w); err != nil {
		return Response{}, &Error{Kind: KindMalformedResponse, Status: status,
			Message: "invalid JSON body: " + redact(err.Error(), sec) + ": " + snippet(body, sec)}
	}
	if w.Type == "error" || len(w.Error) > 0 && string(w.Error) != "null" {
		return Response{}, anthropicError(w.Error, status, sec)
	}
	if w.Type != "message" {
		return Response{}, &Error{Kind: KindMalformedResponse, Status: status, Message: "not a message: " + snippet(body, sec)}
	}
	var text, reasoning strings.Builder
	r := Response{Model: w.Model, ID: w.ID, Usage: w.Usage.usage()}
	for _, b := range w.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
			r.ReasoningSignature = b.Signature
		case "tool_use":
			r.ToolCalls = append(r.ToolCalls, toolCall(b.ID, b.Name, argumentsText(b.Input)))
		}
	}
	r.Content, r.Reasoning = text.String(), reasoning.String()
	if w.StopReason != nil {
		r.FinishReason = stopReason(*w.StopReason)
	}
	return r, nil
}

// Streams.

// anthropicStream decodes a Messages stream; its tool calls are numbered
// in the order their tool_use blocks start.
type anthropicStream struct {
	usage anthropicUsage
	tools map[int]*streamTool // by block index
	n     int                 // tool calls seen
}

// streamTool is a tool_use block being streamed.
type streamTool struct {
	index int
	input json.RawMessage // the input the block started with
	args  bool            // some input_json_delta arrived
}

func (*anthropicStream) end() string { return "message_stop" }

type anthropicEvent struct {
	Type         string           `json:"type"`
	Index        int              `json:"index"`
	Message      *anthropicReply  `json:"message"`
	ContentBlock *anthropicOutput `json:"content_block"`
	Delta        *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		Thinking    string  `json:"thinking"`
		Signature   string  `json:"signature"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (a *anthropicStream) event(s *streamState, data []byte) (bool, error) {
	var ev anthropicEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, s.malformed("event", err, data)
	}
	switch ev.Type {
	case "message_start":
		if m := ev.Message; m != nil {
			s.meta(m.ID, m.Model)
			if m.Usage != nil {
				a.usage.merge(m.Usage)
			}
		}
	case "content_block_start":
		b := ev.ContentBlock
		switch {
		case b == nil:
		case b.Type == "tool_use":
			t := &streamTool{index: a.n, input: b.Input}
			a.n++
			a.tools[ev.Index] = t
			return false, s.emit(Delta{Kind: DeltaToolCall, ToolCall: &ToolCallDelta{Index: t.index, ID: b.ID, Name: b.Name}})
		case b.Type == "text" && b.Text != "":
			return false, s.emit(Delta{Kind: DeltaText, Text: b.Text})
		case b.Type == "thinking" && b.Thinking != "":
			return false, s.emit(Delta{Kind: DeltaReasoning, Text: b.Thinking})
		}
	case "content_block_delta":
		d := ev.Delta
		switch {
		case d == nil:
		case d.Type == "text_delta" && d.Text != "":
			return false, s.emit(Delta{Kind: DeltaText, Text: d.Text})
		case d.Type == "thinking_delta" && d.Thinking != "":
			return false, s.emit(Delta{Kind: DeltaReasoning, Text: d.Thinking})
		case d.Type == "signature_delta":
			s.asm.resp.ReasoningSignature += d.Signature
		case d.Type == "input_json_delta":
			t := a.tools[ev.Index]
			if t == nil || d.PartialJSON == "" {
				return false, nil
			}
			t.args = true
			return false, s.emit(Delta{Kind: DeltaToolCall, ToolCall: &ToolCallDelta{Index: t.index, Arguments: d.PartialJSON}})
		}
	case "content_block_stop":
		// A tool_use block that streamed no input has the input it started
		// with ({} for a call without arguments).
		if t := a.tools[ev.Index]; t != nil && !t.args {
			t.args = true
			args := argumentsText(t.input)
			if args == "" {
				args = "{}"
			}
			return false, s.emit(Delta{Kind: DeltaToolCall, ToolCall: &ToolCallDelta{Index: t.index, Arguments: args}})
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != nil {
			if err := s.emit(Delta{Kind: DeltaFinish, FinishReason: stopReason(*ev.Delta.StopReason)}); err != nil {
				return false, err
			}
		}
		if ev.Usage != nil {
			a.usage.merge(ev.Usage)
			return false, s.usage(a.usage.usage())
		}
	case "message_stop":
		return true, nil
	case "error":
		return false, anthropicError(ev.Error, s.status, s.a.secrets)
	}
	// ping, and event types this dialect does not know yet, carry nothing.
	return false, nil
}
