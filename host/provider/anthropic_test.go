package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// anthropicRequest uses what the Messages API renders differently from
// chat completions: system messages first and later, parts with images,
// an assistant's text and tool calls, consecutive tool results, tools
// with and without a schema, breakpoints, Extra.
func anthropicRequest() tokenizer.Request {
	return tokenizer.Request{
		Model: "claude-test",
		Messages: []tokenizer.Message{
			{Role: tokenizer.RoleSystem, Content: "Be brief."},
			{Role: tokenizer.RoleSystem, Content: "Pinned: the deploy is on Friday."},
			{Role: tokenizer.RoleUser, Parts: []tokenizer.Part{tokenizer.TextPart("What is this?"),
				tokenizer.ImagePart("data:image/png;base64,iVBORw0K", tokenizer.DetailLow), tokenizer.ImagePart("https://example.org/a.png", "")}},
			{Role: tokenizer.RoleAssistant, Content: "Let me look.", Reasoning: "A word: look it up.", ReasoningSignature: "sig-1", ToolCalls: []tokenizer.ToolCall{
				{ID: "toolu_1", Function: tokenizer.FunctionCall{Name: "lookup", Arguments: `{"q": "a"}`}},
				{ID: "toolu_2", Function: tokenizer.FunctionCall{Name: "now", Arguments: ""}}}},
			{Role: tokenizer.RoleTool, ToolCallID: "toolu_1", Content: "a is a letter"},
			{Role: tokenizer.RoleTool, ToolCallID: "toolu_2", Content: "noon"},
			{Role: tokenizer.RoleSystem, Content: "Note: sequences 1..3 may be absent."},
			{Role: tokenizer.RoleUser, Content: "And so?"},
		},
		Tools: []tokenizer.Tool{
			{Function: tokenizer.FunctionDef{Name: "lookup", Description: "Look up a word.", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}},
			{Function: tokenizer.FunctionDef{Name: "now"}},
		},
		MaxTokens:   256,
		Temperature: new(0.0),
		Stop:        []string{"END"},
		Extra:       map[string]json.RawMessage{"top_k": json.RawMessage(`5`), "metadata": json.RawMessage(`{ "user_id": "u1" }`)},
		Cache:       tokenizer.CacheHints{Breakpoints: []int{1, 5}, TTL: "1h"},
	}
}

// TestAnthropicBody pins the Messages body: system blocks, one user turn
// for consecutive tool results (and the system note and question after
// them), images as base64 or url sources, the signed thinking before the
// tool calls it led to, tool_use inputs as objects,
// input_schema, cache_control on the blocks ending the breakpoints,
// max_tokens, stop_sequences, Extra in key order, stream last.
func TestAnthropicBody(t *testing.T) {
	req := anthropicRequest()
	got, err := provider.AnthropicMessages.Body(&req, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"claude-test","max_tokens":256,` +
		`"system":[{"type":"text","text":"Be brief."},{"type":"text","text":"Pinned: the deploy is on Friday.","cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}},{"type":"image","source":{"type":"url","url":"https://example.org/a.png"}}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"A word: look it up.","signature":"sig-1"},{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q":"a"}},{"type":"tool_use","id":"toolu_2","name":"now","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a is a letter"},{"type":"tool_result","tool_use_id":"toolu_2","content":"noon","cache_control":{"type":"ephemeral","ttl":"1h"}},` +
		`{"type":"text","text":"Note: sequences 1..3 may be absent."},{"type":"text","text":"And so?"}]}],` +
		`"tools":[{"name":"lookup","description":"Look up a word.","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}},{"name":"now","input_schema":{"type":"object","properties":{}}}],` +
		`"temperature":0,"stop_sequences":["END"],"metadata":{"user_id":"u1"},"top_k":5,"stream":true}`
	if string(got) != want {
		t.Fatalf("Body =\n%s\nwant\n%s", got, want)
	}
	again, _ := provider.AnthropicMessages.Body(&req, true)
	if string(again) != string(got) {
		t.Errorf("a second Body differs:\n%s", again)
	}
	// Counting stays on the request: its cache hints cost nothing, and
	// the chat-completions body of the same request carries none.
	openai, _ := provider.OpenAIChat.Body(&req, false)
	if strings.Contains(string(openai), "cache") {
		t.Errorf("the openai body carries the cache hints: %s", openai)
	}
}

func TestAnthropicBodyRefuses(t *testing.T) {
	for name, edit := range map[string]func(*tokenizer.Request){
		"seed":             func(r *tokenizer.Request) { r.Seed = new(int64(1)) },
		"response format":  func(r *tokenizer.Request) { r.ResponseFormat = &tokenizer.ResponseFormat{Type: "json_object"} },
		"five breakpoints": func(r *tokenizer.Request) { r.Cache.Breakpoints = []int{0, 1, 2, 3, 4} },
		"system only":      func(r *tokenizer.Request) { r.Messages = r.Messages[:2] },
		"image in system":  func(r *tokenizer.Request) { r.Messages[0].Parts = r.Messages[2].Parts },
		"bad data URL":     func(r *tokenizer.Request) { r.Messages[2].Parts[1].ImageURL = "data:image/png,raw" },
		"typed extra":      func(r *tokenizer.Request) { r.Extra["system"] = json.RawMessage(`"x"`) },
	} {
		req := anthropicRequest()
		req.Cache = tokenizer.CacheHints{}
		edit(&req)
		if b, err := provider.AnthropicMessages.Body(&req, false); err == nil {
			t.Errorf("%s: Body = %s, want an error", name, b)
		} else if pe := asError(t, err); pe.Kind != provider.KindInvalidRequest {
			t.Errorf("%s: kind %v, want invalid_request", name, pe.Kind)
		}
	}
}

// newAnthropic serves a scripted Anthropic server behind the recording
// server, after the given handlers.
func newAnthropic(t *testing.T, opts providertest.AnthropicOptions, first ...http.HandlerFunc) (*providertest.Anthropic, *fakeServer) {
	t.Helper()
	a := providertest.NewAnthropic(opts)
	return a, newFake(t, append(first, a.ServeHTTP)...)
}

func anthropicClient(t *testing.T, f *fakeServer) *provider.Client {
	return newClient(t, f, func(o *provider.Options) { o.API = provider.APIAnthropic; o.CacheTTL = "1h" })
}

// TestAnthropicComplete: the bytes received are the body reported and
// the dialect's rendering of the prepared request (max_tokens and the
// TTL filled in); x-api-key and anthropic-version are sent, no
// Authorization; the answer decodes to text, tool calls and a usage
// whose prompt is input plus cache reads and writes.
func TestAnthropicComplete(t *testing.T) {
	a, f := newAnthropic(t, providertest.AnthropicOptions{MinCacheTokens: 1, Reply: func(int, map[string]any) providertest.AnthropicReply {
		return providertest.AnthropicReply{Text: "Looking.", Thinking: "first, the tool", ToolUses: []providertest.ToolUse{{ID: "toolu_9", Name: "lookup", Input: `{"q":"b"}`}}, OutputTokens: 11}
	}})
	c := anthropicClient(t, f)
	req := anthropicRequest()
	req.MaxTokens = 0
	req.Cache.TTL = ""
	var attempts []provider.Attempt
	ctx := provider.WithAttemptTrace(context.Background(), func(a provider.Attempt) { attempts = append(attempts, a) })
	resp, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	r := f.requests()[0]
	if string(resp.RequestBody) != r.Raw || r.Path != "/v1/messages" {
		t.Fatalf("RequestBody =\n%s\nserver received at %s\n%s", resp.RequestBody, r.Path, r.Raw)
	}
	if len(attempts) != 1 || attempts[0].Dialect != "anthropic" || attempts[0].Request.MaxTokens != 4096 || attempts[0].Request.Cache.TTL != "1h" {
		t.Fatalf("attempts = %+v", attempts)
	}
	if b, _ := provider.AnthropicMessages.Body(attempts[0].Request, false); string(b) != r.Raw {
		t.Errorf("the attempt's request renders\n%s\nthe server received\n%s", b, r.Raw)
	}
	if req.MaxTokens != 0 {
		t.Errorf("the caller's request was changed: max_tokens %d", req.MaxTokens)
	}
	for h, v := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01", "Authorization": ""} {
		if g := r.Header.Get(h); g != v {
			t.Errorf("header %s = %q, want %q", h, g, v)
		}
	}
	u := resp.Usage
	su := a.Usages()[0]
	if !u.PromptKnown || u.PromptTokens != su.Prompt() || !u.CachedKnown || u.CachedTokens != 0 || !u.CacheWriteKnown ||
		u.CacheWriteTokens != su.CacheWrite || su.CacheWrite == 0 || u.CompletionTokens != 11 || u.TotalTokens != su.Prompt()+11 {
		t.Errorf("usage = %v, want the server's %+v (input, read and written) and 11 output tokens", u, su)
	}
	want := provider.Response{Content: "Looking.", Reasoning: "first, the tool", ReasoningSignature: "sig", FinishReason: "tool_calls", Model: "claude-test", ID: "msg_0",
		ToolCalls: []tokenizer.ToolCall{{ID: "toolu_9", Type: "function", Function: tokenizer.FunctionCall{Name: "lookup", Arguments: `{"q":"b"}`}}}, Usage: u}
	if got := withoutBody(resp); !reflect.DeepEqual(got, want) {
		t.Errorf("Complete =\n%+v\nwant\n%+v", got, want)
	}
}

// TestAnthropicStream: text, thinking and two tool calls whose inputs
// arrive as input_json_delta fragments are delivered and assembled; the
// usage of message_start and message_delta is one; the stop reason is
// tool_calls.
func TestAnthropicStream(t *testing.T) {
	_, f := newAnthropic(t, providertest.AnthropicOptions{Reply: func(int, map[string]any) providertest.AnthropicReply {
		return providertest.AnthropicReply{Text: "Two calls.", Thinking: "hmm", OutputTokens: 30, ToolUses: []providertest.ToolUse{
			{ID: "toolu_a", Name: "history_search", Input: `{"query":"lease","max_results":3}`},
			{ID: "toolu_b", Name: "history_peek", Input: `{"sequence":4}`}}}
	}})
	c := anthropicClient(t, f)
	var kinds []string
	var args []string
	resp, err := c.Stream(context.Background(), userReq("search"), func(d provider.Delta) error {
		kinds = append(kinds, d.Kind.String())
		if d.Kind == provider.DeltaToolCall && d.ToolCall.Arguments != "" {
			args = append(args, d.ToolCall.Arguments)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(args) != 4 {
		t.Errorf("argument fragments = %q, want two per call", args)
	}
	if resp.Content != "Two calls." || resp.Reasoning != "hmm" || resp.ReasoningSignature != "sig" || resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 2 ||
		resp.ToolCalls[0].Function.Arguments != `{"query":"lease","max_results":3}` || resp.ToolCalls[1].ID != "toolu_b" ||
		resp.ToolCalls[1].Function.Arguments != `{"sequence":4}` {
		t.Errorf("Stream = %+v", withoutBody(resp))
	}
	if u := resp.Usage; !u.PromptKnown || u.CompletionTokens != 30 || !u.CachedKnown {
		t.Errorf("usage = %v", u)
	}
	if kinds[len(kinds)-1] != "usage" || !strings.Contains(strings.Join(kinds, " "), "reasoning text") {
		t.Errorf("delta kinds = %v", kinds)
	}
	if !strings.HasSuffix(f.requests()[0].Raw, `"stream":true}`) {
		t.Errorf("stream body = %s", f.requests()[0].Raw)
	}
}

// TestAnthropicErrors: 529 overloaded_error is retried like 429, and so
// is an error event before anything was delivered; a prompt the API
// refuses as too long is context_length_exceeded with its counts, not
// retried.
func TestAnthropicErrors(t *testing.T) {
	overloaded := providertest.AnthropicError(529, "overloaded_error", "Overloaded")
	midStream := providertest.RawSSE("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	t.Run("529 retried", func(t *testing.T) {
		_, f := newAnthropic(t, providertest.AnthropicOptions{}, overloaded, overloaded)
		resp, err := anthropicClient(t, f).Complete(context.Background(), userReq("hi"))
		if err != nil || resp.Content != "ok" || len(f.requests()) != 3 {
			t.Fatalf("Complete = %+v, %v after %d requests; want ok after 3", resp, err, len(f.requests()))
		}
	})
	t.Run("529 exhausts retries", func(t *testing.T) {
		_, f := newAnthropic(t, providertest.AnthropicOptions{}, overloaded, overloaded, overloaded)
		_, err := anthropicClient(t, f).Complete(context.Background(), userReq("hi"))
		pe := asError(t, err)
		if pe.Status != 529 || pe.Type != "overloaded_error" || !pe.Retryable || pe.Attempts != 3 {
			t.Errorf("error = %+v", pe)
		}
	})
	t.Run("error event retried", func(t *testing.T) {
		_, f := newAnthropic(t, providertest.AnthropicOptions{}, midStream)
		resp, err := anthropicClient(t, f).Stream(context.Background(), userReq("hi"), nil)
		if err != nil || resp.Content != "ok" || len(f.requests()) != 2 {
			t.Fatalf("Stream = %+v, %v after %d requests", resp, err, len(f.requests()))
		}
	})
	t.Run("too long", func(t *testing.T) {
		_, f := newAnthropic(t, providertest.AnthropicOptions{Window: 100})
		req := userReq(strings.Repeat("lease ", 200))
		_, err := anthropicClient(t, f).Complete(context.Background(), req)
		pe := asError(t, err)
		if pe.Kind != provider.KindContextLength || pe.Status != 400 || pe.Retryable || pe.PromptTokens <= 100 || pe.ContextLimit != 100 || len(f.requests()) != 1 {
			t.Errorf("error = %+v after %d requests", pe, len(f.requests()))
		}
	})
	t.Run("max_tokens over the window", func(t *testing.T) {
		_, f := newAnthropic(t, providertest.AnthropicOptions{Window: 100})
		req := userReq("short")
		req.MaxTokens = 200
		_, err := anthropicClient(t, f).Complete(context.Background(), req)
		if pe := asError(t, err); pe.Kind != provider.KindContextLength || pe.ContextLimit != 100 || pe.PromptTokens == 0 {
			t.Errorf("error = %+v", pe)
		}
	})
}

// TestContextLengthMessages reads the prompt's count and the limit from
// the ways providers refuse a prompt as too long.
func TestContextLengthMessages(t *testing.T) {
	for _, tc := range []struct {
		body          string
		prompt, limit int
	}{
		{`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208193 tokens > 200000 maximum"}}`, 208193, 200000},
		{`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130516 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}`, 130516, 128000},
		{`{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).","code":"context_length_exceeded"}}`, 8000, 8192},
		{`{"error":{"message":"too many tokens","code":"context_length_exceeded"}}`, 0, 0},
	} {
		f := newFake(t, reply(400, tc.body))
		_, err := newClient(t, f, nil).Complete(context.Background(), userReq("hi"))
		pe := asError(t, err)
		if pe.Kind != provider.KindContextLength || pe.PromptTokens != tc.prompt || pe.ContextLimit != tc.limit || pe.Retryable {
			t.Errorf("%s: error = %+v, want context_length_exceeded %d > %d", tc.body, pe, tc.prompt, tc.limit)
		}
	}
}

// TestAnthropicPreset: the anthropic preset and api = "anthropic" in the
// file give an anthropic client, ANTHROPIC_BASE_URL moves its root (the
// SDKs' form, without /v1), and an unknown api or TTL is a configuration
// error naming the field.
func TestAnthropicPreset(t *testing.T) {
	r, err := provider.Resolve("anthropic", provider.Settings{}, nil, env(map[string]string{"ANTHROPIC_BASE_URL": "http://proxy.example/"}))
	if err != nil {
		t.Fatal(err)
	}
	if o := r.Options; o.API != "anthropic" || o.BaseURL != "http://proxy.example/v1" || o.Credential != "ANTHROPIC_API_KEY" || o.Model == "" || r.StructuredOutput {
		t.Errorf("anthropic preset = %+v (structured %v)", o, r.StructuredOutput)
	}
	cfg := mustConfig(t, "[providers.claude]\napi = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1\"\ncredential = \"env:CLAUDE_KEY\"\nmodel = \"claude-x\"\ncache_ttl = \"1h\"\n")
	r, err = provider.Resolve("claude", provider.Settings{}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := provider.NewClient(&r.Options)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dialect() != provider.AnthropicMessages || r.Options.CacheTTL != "1h" || r.From["api"] != provider.SourceFile {
		t.Errorf("claude = %v, from %v", c, r.From)
	}
	for field, text := range map[string]string{
		"api":       "[providers.x]\napi = \"gemini\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
		"cache_ttl": "[providers.x]\napi = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1\"\ncache_ttl = \"2h\"\n",
	} {
		_, err := provider.Resolve("x", provider.Settings{}, mustConfig(t, text), nil)
		var ce *provider.ConfigError
		if !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: Resolve = %v, want a configuration error of %s", field, err, field)
		}
	}
	if _, err := provider.NewClient(&provider.Options{API: "gemini"}); err == nil {
		t.Error("NewClient with api gemini: no error")
	}
}
