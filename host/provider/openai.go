package provider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// OpenAIChat is the chat-completions dialect (POST /chat/completions):
// OpenAI's, and that of OpenRouter, DeepSeek, vLLM, Ollama and llama.cpp's
// llama-server. Its body is the request's wire JSON
// ([tokenizer.Request.MarshalJSON]), so what the tokenizer counts is byte
// for byte what is sent; responses are normalized across those servers
// (content as text or parts, reasoning_content or reasoning, tool-call
// arguments as a string or an object). It sends no cache breakpoints:
// these servers cache every prefix on their own.
var OpenAIChat Dialect = openAIChat{}

type openAIChat struct{}

func (openAIChat) Name() string { return APIOpenAI }

// Body is [Body].
func (openAIChat) Body(req *tokenizer.Request, stream bool) ([]byte, error) { return Body(req, stream) }

func (openAIChat) path() string { return "/chat/completions" }

func (openAIChat) header(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

func (openAIChat) prepare(*tokenizer.Request, *Options) {}

func (openAIChat) allowedOptions() []string {
	return []string{"frequency_penalty", "logit_bias", "max_completion_tokens", "parallel_tool_calls",
		"presence_penalty", "reasoning", "reasoning_effort", "tool_choice", "user"}
}

func (openAIChat) newStream() streamDecoder { return &openAIStream{} }

type wireResponse struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      *wireReply      `json:"message"`
	Delta        *wireReply      `json:"delta"`
	FinishReason *string         `json:"finish_reason"`
	Error        json.RawMessage `json:"error"`
}

type wireReply struct {
	Content          json.RawMessage     `json:"content"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        *string             `json:"reasoning"`
	ToolCalls        []wireReplyToolCall `json:"tool_calls"`
}

type wireReplyToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// wireUsage is the usage object of a response or chunk.
type wireUsage = usageJSON

// text renders message content: a string, null, or an array of parts whose
// text parts are concatenated.
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "output_text" {
			sb.WriteString(p.Text)
		}
	}
	return sb.String(), true
}

func reasoningText(m *wireReply) string {
	if m.ReasoningContent != nil && *m.ReasoningContent != "" {
		return *m.ReasoningContent
	}
	if m.Reasoning != nil {
		return *m.Reasoning
	}
	return ""
}

// argumentsText renders function.arguments: normally a JSON string; some
// servers send the object itself, which is kept as its JSON text.
func argumentsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// bodyError returns the provider error a body carries, or nil.
func bodyError(w *wireResponse, status int, sec secrets) *Error {
	msg, typ, code, ok := errorFields(errorBody{Error: w.Error, Object: w.Object, Message: w.Message, Type: w.Type, Code: w.Code})
	if !ok && len(w.Choices) > 0 && len(w.Choices[0].Error) > 0 && string(w.Choices[0].Error) != "null" {
		msg, typ, code, ok = errorFields(errorBody{Error: w.Choices[0].Error})
	}
	if !ok {
		return nil
	}
	e := &Error{Kind: KindProviderError, Status: status, Code: redact(code, sec), Type: redact(typ, sec), Message: redact(msg, sec)}
	if n, err := strconv.Atoi(code); err == nil && retryableStatus(n) {
		e.Retryable = true
	}
	contextLength(e)
	return e
}

// decodeResponse normalizes a complete (non-streaming) 2xx body.
func (openAIChat) decodeResponse(body []byte, status int, sec secrets) (Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return Response{}, &Error{Kind: KindMalformedResponse, Status: status,
			Message: "invalid JSON body: " + redact(err.Error(), sec) + ": " + snippet(body, sec)}
	}
	if e := bodyError(&w, status, sec); e != nil {
		return Response{}, e
	}
	if len(w.Choices) == 0 || w.Choices[0].Message == nil {
		return Response{}, &Error{Kind: KindMalformedResponse, Status: status, Message: "no choice with a message: " + snippet(body, sec)}
	}
	ch := w.Choices[0]
	text, ok := contentText(ch.Message.Content)
	if !ok {
		return Response{}, &Error{Kind: KindMalformedResponse, Status: status, Message: "choices[0].message.content is neither text nor parts"}
	}
	r := Response{Content: text, Reasoning: reasoningText(ch.Message), Model: w.Model, ID: w.ID, Usage: w.Usage.usage()}
	if ch.FinishReason != nil {
		r.FinishReason = *ch.FinishReason
	}
	for _, tc := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, toolCall(tc.ID, tc.Function.Name, argumentsText(tc.Function.Arguments)))
	}
	return r, nil
}

// openAIStream decodes a chat-completions stream: chunks of choices, a
// usage chunk (stream_options.include_usage), then [DONE].
type openAIStream struct {
	lastID string // id of the last tool call, for servers that omit index
	n      int    // tool calls seen
}

func (*openAIStream) end() string { return "[DONE]" }

var doneMarker = []byte("[DONE]")

// event handles one data payload; done reports [DONE].
func (o *openAIStream) event(s *streamState, data []byte) (done bool, err error) {
	if bytes.Equal(bytes.TrimSpace(data), doneMarker) {
		return true, nil
	}
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return false, s.malformed("chunk", err, data)
	}
	if e := bodyError(&w, s.status, s.a.secrets); e != nil {
		return false, e
	}
	s.meta(w.ID, w.Model)
	for _, ch := range w.Choices {
		if ch.Index != 0 {
			continue // only the first choice is assembled
		}
		if d := ch.Delta; d != nil {
			if r := reasoningText(d); r != "" {
				if err := s.emit(Delta{Kind: DeltaReasoning, Text: r}); err != nil {
					return false, err
				}
			}
			text, ok := contentText(d.Content)
			if !ok {
				return false, &Error{Kind: KindMalformedResponse, Status: s.status, Message: "delta.content is neither text nor parts"}
			}
			if text != "" {
				if err := s.emit(Delta{Kind: DeltaText, Text: text}); err != nil {
					return false, err
				}
			}
			for _, tc := range d.ToolCalls {
				if err := s.emit(Delta{Kind: DeltaToolCall, ToolCall: o.toolCall(tc)}); err != nil {
					return false, err
				}
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			if err := s.emit(Delta{Kind: DeltaFinish, FinishReason: *ch.FinishReason}); err != nil {
				return false, err
			}
		}
	}
	if w.Usage != nil {
		if err := s.usage(w.Usage.usage()); err != nil {
			return false, err
		}
	}
	return false, nil
}

// toolCall maps a wire fragment to its index. Servers that omit index get
// one inferred: a new id starts a new call, anything else continues the
// last one.
func (s *openAIStream) toolCall(tc wireReplyToolCall) *ToolCallDelta {
	var i int
	switch {
	case tc.Index != nil:
		i = *tc.Index
	case tc.ID != "" && tc.ID != s.lastID || s.n == 0:
		i = s.n
	default:
		i = s.n - 1
	}
	if i < 0 || i > 1<<10 {
		i = s.n // NB: a hostile index must not make the assembler allocate
	}
	if i >= s.n {
		s.n = i + 1
	}
	if tc.ID != "" {
		s.lastID = tc.ID
	}
	return &ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: argumentsText(tc.Function.Arguments)}
}
