package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func asError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	return pe
}

func TestCompleteSuccess(t *testing.T) {
	f := newFake(t, reply(200, okBody))
	c := newClient(t, f, func(o *provider.Options) {
		o.Headers = map[string]string{"X-Title": "rlmpl", "http-referer": "https://example.org"}
	})
	req := userReq("hi")
	req.MaxTokens = 16
	req.Temperature = new(0.0)
	req.Seed = new(int64(7))
	req.Stop = []string{"\n"}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	r := f.requests()[0]
	// What the server received is byte for byte what the response reports,
	// and what the request encodes to.
	if string(resp.RequestBody) != r.Raw {
		t.Errorf("RequestBody =\n%s\nserver received\n%s", resp.RequestBody, r.Raw)
	}
	req.Model = "test-model"
	if b, _ := provider.Body(&req, false); string(b) != r.Raw {
		t.Errorf("Body =\n%s\nserver received\n%s", b, r.Raw)
	}
	want := provider.Response{Content: "hello", FinishReason: "stop", Model: "test-model-0613", ID: "chatcmpl-1",
		Usage: provider.TokenUsage(9, 1)}
	if !reflect.DeepEqual(withoutBody(resp), want) {
		t.Errorf("Complete = %+v, want %+v", resp, want)
	}
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", r.Method, r.Path)
	}
	for h, v := range map[string]string{
		"Authorization": "Bearer " + testKey, "Accept": "application/json", "Content-Type": "application/json",
		"User-Agent": "rlmpl-provider/0.1", "X-Title": "rlmpl", "Http-Referer": "https://example.org",
	} {
		if g := r.Header.Get(h); g != v {
			t.Errorf("header %s = %q, want %q", h, g, v)
		}
	}
	wantBody := `{"model":"test-model","messages":[{"role":"user","content":"hi"}],"max_tokens":16,"temperature":0,"stop":["\n"],"seed":7}`
	if r.Raw != wantBody {
		t.Errorf("body =\n%s\nwant\n%s", r.Raw, wantBody)
	}
}

func TestCompleteDialects(t *testing.T) {
	msg := func(m string) string {
		return `{"id":"x","model":"m","choices":[{"index":0,"message":` + m + `,"finish_reason":"stop"}]}`
	}
	tests := []struct {
		name string
		body string
		want provider.Response
	}{
		{"openrouter cost and reasoning",
			`{"id":"gen-1","model":"openai/gpt-4o","provider":"OpenAI","choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning":"think","reasoning_details":[]},"finish_reason":"stop","native_finish_reason":"stop"}],
			  "usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"cost":0.00042,"cost_details":{"upstream_inference_cost":null}}}`,
			provider.Response{Content: "ok", Reasoning: "think", FinishReason: "stop", Model: "openai/gpt-4o", ID: "gen-1",
				Usage: provider.TokenUsage(5, 2).WithCost(0.00042)}},
		{"deepseek reasoning_content",
			`{"id":"d","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"4","reasoning_content":"2+2"},"logprobs":null,"finish_reason":"stop"}],
			  "usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":10}}`,
			provider.Response{Content: "4", Reasoning: "2+2", FinishReason: "stop", Model: "deepseek-reasoner", ID: "d", Usage: provider.TokenUsage(10, 3).WithCached(0)}},
		{"llama.cpp timings",
			`{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","content":"abc"}}],"created":1,"model":"gpt-3.5-turbo","system_fingerprint":"b1","object":"chat.completion",
			  "usage":{"completion_tokens":4,"prompt_tokens":28,"total_tokens":32},"id":"chatcmpl-L","timings":{"prompt_n":28}}`,
			provider.Response{Content: "abc", FinishReason: "length", Model: "gpt-3.5-turbo", ID: "chatcmpl-L", Usage: provider.TokenUsage(28, 4)}},
		{"missing usage is unknown", msg(`{"role":"assistant","content":"x"}`),
			provider.Response{Content: "x", FinishReason: "stop", Model: "m", ID: "x"}},
		{"null usage is unknown",
			`{"model":"m","choices":[{"message":{"content":"x"}}],"usage":null}`,
			provider.Response{Content: "x", Model: "m"}},
		{"total derived, cost unknown",
			`{"model":"m","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			provider.Response{Content: "x", Model: "m", Usage: provider.TokenUsage(3, 2)}},
		{"partial usage",
			`{"model":"m","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":3}}`,
			provider.Response{Content: "x", Model: "m", Usage: provider.Usage{PromptTokens: 3, PromptKnown: true}}},
		{"null content with tool calls",
			msg(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"go\"}"}}]}`),
			provider.Response{ToolCalls: []tokenizer.ToolCall{{ID: "call_1", Type: "function", Function: tokenizer.FunctionCall{Name: "search", Arguments: `{"q":"go"}`}}}, FinishReason: "stop", Model: "m", ID: "x"}},
		{"object arguments (ollama)",
			msg(`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a": 1}}}]}`),
			provider.Response{ToolCalls: []tokenizer.ToolCall{{Type: "function", Function: tokenizer.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}, FinishReason: "stop", Model: "m", ID: "x"}},
		{"content parts", msg(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]}`),
			provider.Response{Content: "ab", FinishReason: "stop", Model: "m", ID: "x"}},
		{"empty message is a valid answer", msg(`{"role":"assistant","content":""}`),
			provider.Response{FinishReason: "stop", Model: "m", ID: "x"}},
		{"model defaults to requested", `{"choices":[{"message":{"content":"x"},"finish_reason":null}]}`,
			provider.Response{Content: "x", Model: "test-model"}},
		{"float token counts", `{"model":"m","choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":3.0,"completion_tokens":1,"total_tokens":4}}`,
			provider.Response{Content: "x", Model: "m", Usage: provider.TokenUsage(3, 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, newFake(t, reply(200, tc.body)), nil)
			resp, err := c.Complete(context.Background(), userReq("q"))
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if !reflect.DeepEqual(withoutBody(resp), tc.want) {
				t.Errorf("Complete =\n%+v\nwant\n%+v", resp, tc.want)
			}
		})
	}
}

func TestCompleteToolRoundTrip(t *testing.T) {
	f := newFake(t, reply(200, `{"model":"m","choices":[{"message":{"content":"done"},"finish_reason":"stop"}]}`))
	c := newClient(t, f, nil)
	req := tokenizer.Request{
		Messages: []tokenizer.Message{
			{Role: tokenizer.RoleSystem, Content: "be brief"},
			{Role: tokenizer.RoleUser, Parts: []tokenizer.Part{tokenizer.TextPart("what is this?"), tokenizer.ImagePart("https://x/cat.png", tokenizer.DetailLow)}},
			{Role: tokenizer.RoleAssistant, ToolCalls: []tokenizer.ToolCall{{ID: "call_1", Type: "function", Function: tokenizer.FunctionCall{Name: "lookup", Arguments: `{"id":3}`}}}, Reasoning: "not sent"},
			{Role: tokenizer.RoleTool, ToolCallID: "call_1", Name: "lookup", Content: "a cat"},
		},
		Tools: []tokenizer.Tool{{Function: tokenizer.FunctionDef{Name: "lookup", Description: "find by id",
			Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)}}},
		ResponseFormat: &tokenizer.ResponseFormat{Type: "json_schema",
			JSONSchema: &tokenizer.JSONSchema{Name: "plan", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}},
		Extra: map[string]json.RawMessage{"tool_choice": json.RawMessage(`"auto"`), "parallel_tool_calls": json.RawMessage(`false`)},
	}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := `{"model":"test-model","messages":[{"role":"system","content":"be brief"},` +
		`{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://x/cat.png","detail":"low"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"id\":3}"}}]},` +
		`{"role":"tool","content":"a cat","name":"lookup","tool_call_id":"call_1"}],` +
		`"tools":[{"type":"function","function":{"name":"lookup","description":"find by id","parameters":{"type":"object","properties":{"id":{"type":"integer"}}}}}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"plan","schema":{"type":"object"},"strict":true}},` +
		`"parallel_tool_calls":false,"tool_choice":"auto"}`
	if g := f.requests()[0].Raw; g != want {
		t.Errorf("body =\n%s\nwant\n%s", g, want)
	}
}

func TestInvalidRequests(t *testing.T) {
	tests := []struct {
		name string
		req  tokenizer.Request
		want string
	}{
		{"no messages", tokenizer.Request{}, "request.messages: must be a non-empty list"},
		{"bad role", tokenizer.Request{Messages: []tokenizer.Message{{Role: "robot", Content: "x"}}}, "messages[0].role"},
		{"content and parts", tokenizer.Request{Messages: []tokenizer.Message{{Role: "user", Content: "x", Parts: []tokenizer.Part{tokenizer.TextPart("y")}}}}, "both Content and Parts"},
		{"bad part", tokenizer.Request{Messages: []tokenizer.Message{{Role: "user", Parts: []tokenizer.Part{{Type: "audio"}}}}}, "unsupported content part type"},
		{"bad detail", tokenizer.Request{Messages: []tokenizer.Message{{Role: "user", Parts: []tokenizer.Part{tokenizer.ImagePart("u", "huge")}}}}, "detail"},
		{"user tool calls", tokenizer.Request{Messages: []tokenizer.Message{{Role: "user", ToolCalls: []tokenizer.ToolCall{{Type: "function", Function: tokenizer.FunctionCall{Name: "f"}}}}}}, "only assistant"},
		{"tool without name", func() tokenizer.Request { r := userReq("x"); r.Tools = []tokenizer.Tool{{}}; return r }(), "tools[0].function.name"},
		{"bad schema", func() tokenizer.Request {
			r := userReq("x")
			r.ResponseFormat = &tokenizer.ResponseFormat{Type: "json_schema"}
			return r
		}(), "json_schema"},
		{"unknown extra", func() tokenizer.Request {
			r := userReq("x")
			r.Extra = map[string]json.RawMessage{"grammar": json.RawMessage(`"root ::= x"`)}
			return r
		}(), "request.extra.grammar: is not an allowed option"},
		{"typed extra", func() tokenizer.Request {
			r := userReq("x")
			r.Extra = map[string]json.RawMessage{"max_tokens": json.RawMessage(`5`)}
			return r
		}(), "is set through Request.MaxTokens"},
		{"stream extra", func() tokenizer.Request {
			r := userReq("x")
			r.Extra = map[string]json.RawMessage{"stream": json.RawMessage(`true`)}
			return r
		}(), "is set through Provider.Stream"},
		{"invalid extra JSON", func() tokenizer.Request {
			r := userReq("x")
			r.Extra = map[string]json.RawMessage{"tool_choice": json.RawMessage(`{`)}
			return r
		}(), "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply(200, okBody))
			c := newClient(t, f, nil)
			_, err := c.Complete(context.Background(), tc.req)
			pe := asError(t, err)
			if pe.Kind != provider.KindInvalidRequest || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Complete error = %v (kind %v), want invalid_request containing %q", err, pe.Kind, tc.want)
			}
			if n := len(f.requests()); n != 0 {
				t.Errorf("server received %d requests, want 0", n)
			}
		})
	}
}

func TestAllowedOptions(t *testing.T) {
	f := newFake(t, reply(200, okBody))
	c := newClient(t, f, func(o *provider.Options) { o.AllowedOptions = []string{"grammar", "top_k"} })
	req := userReq("x")
	req.Extra = map[string]json.RawMessage{"top_k": json.RawMessage(`40`), "grammar": json.RawMessage(`"root ::= \"a\""`)}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if g, want := f.requests()[0].Raw, `{"model":"test-model","messages":[{"role":"user","content":"x"}],"grammar":"root ::= \"a\"","top_k":40}`; g != want {
		t.Errorf("body = %s, want %s", g, want)
	}
	req.Extra = map[string]json.RawMessage{"tool_choice": json.RawMessage(`"auto"`)} // a default, but not in this list
	if _, err := c.Complete(context.Background(), req); asError(t, err).Kind != provider.KindInvalidRequest {
		t.Errorf("Complete with tool_choice = %v, want invalid_request", err)
	}
	if _, err := provider.NewClient(&provider.Options{AllowedOptions: []string{"messages"}}); err == nil {
		t.Error("NewClient accepted AllowedOptions [messages]")
	}
}

func TestErrorResponses(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    provider.Error // Attempts and Err not compared
	}{
		{"openai 400", reply(400, `{"error":{"message":"Invalid 'messages'","type":"invalid_request_error","param":"messages","code":"invalid_value"}}`),
			provider.Error{Kind: provider.KindProviderError, Status: 400, Code: "invalid_value", Type: "invalid_request_error", Message: "Invalid 'messages'"}},
		{"openrouter 402 numeric code", reply(402, `{"error":{"code":402,"message":"Insufficient credits"}}`),
			provider.Error{Kind: provider.KindProviderError, Status: 402, Code: "402", Message: "Insufficient credits"}},
		{"openrouter 200 with error", reply(200, `{"error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"Foo","raw":"x"}}}`),
			provider.Error{Kind: provider.KindProviderError, Status: 200, Code: "502", Message: "Provider returned error [upstream Foo]", Retryable: true}},
		{"error in choice", reply(200, `{"choices":[{"index":0,"error":{"code":"server_error","message":"boom"},"finish_reason":"error"}]}`),
			provider.Error{Kind: provider.KindProviderError, Status: 200, Code: "server_error", Message: "boom"}},
		{"vllm top-level", reply(400, `{"object":"error","message":"max_tokens too large","type":"BadRequestError","param":null,"code":400}`),
			provider.Error{Kind: provider.KindProviderError, Status: 400, Code: "400", Type: "BadRequestError", Message: "max_tokens too large"}},
		{"ollama string error", reply(404, `{"error":"model \"nope\" not found, try pulling it first"}`),
			provider.Error{Kind: provider.KindProviderError, Status: 404, Message: `model "nope" not found, try pulling it first`}},
		{"429 rate limit", reply(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", "0"),
			provider.Error{Kind: provider.KindProviderError, Status: 429, Code: "rate_limit_exceeded", Type: "requests", Message: "Rate limit reached", Retryable: true}},
		{"502 html", reply(502, "<html>Bad Gateway</html>", "Content-Type", "text/html"),
			provider.Error{Kind: provider.KindHTTPStatus, Status: 502, Message: `Bad Gateway: "<html>Bad Gateway</html>"`, Retryable: true}},
		{"503 empty", reply(503, ""),
			provider.Error{Kind: provider.KindHTTPStatus, Status: 503, Message: "Service Unavailable", Retryable: true}},
		{"malformed JSON", reply(200, `{"choices":[`),
			provider.Error{Kind: provider.KindMalformedResponse, Status: 200, Message: `invalid JSON body: unexpected end of JSON input: "{\"choices\":["`}},
		{"not an object", reply(200, `[1,2]`),
			provider.Error{Kind: provider.KindMalformedResponse, Status: 200, Message: `invalid JSON body: json: cannot unmarshal array into Go value of type provider.wireResponse: "[1,2]"`}},
		{"no choices", reply(200, `{"id":"x","choices":[]}`),
			provider.Error{Kind: provider.KindMalformedResponse, Status: 200, Message: `no choice with a message: "{\"id\":\"x\",\"choices\":[]}"`}},
		{"bad content", reply(200, `{"choices":[{"message":{"content":42}}]}`),
			provider.Error{Kind: provider.KindMalformedResponse, Status: 200, Message: "choices[0].message.content is neither text nor parts"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.handler)
			c := newClient(t, f, func(o *provider.Options) { o.MaxRetries = -1 })
			resp, err := c.Complete(context.Background(), userReq("q"))
			pe := asError(t, err)
			g := *pe
			g.Attempts, g.Err = 0, nil
			if g != tc.want {
				t.Errorf("Complete error =\n%+v\nwant\n%+v", g, tc.want)
			}
			if pe.Attempts != 1 {
				t.Errorf("Attempts = %d, want 1", pe.Attempts)
			}
			if !reflect.DeepEqual(resp, provider.Response{}) {
				t.Errorf("Complete returned a response with its error: %+v", resp)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	e := &provider.Error{Kind: provider.KindProviderError, Status: 429, Code: "rate_limit_exceeded", Message: "slow down", Attempts: 3}
	if g, want := e.Error(), "provider: provider_error 429 code=rate_limit_exceeded: slow down (after 3 attempts)"; g != want {
		t.Errorf("Error() = %q, want %q", g, want)
	}
	for k := provider.KindHTTPStatus; k <= provider.KindInvalidRequest; k++ {
		b, _ := k.MarshalText()
		var back provider.Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("Kind %v: round trip = %v, %v", k, back, err)
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	f := newFake(t, reply(503, ""), reply(500, `{"error":{"message":"overloaded"}}`), reply(200, okBody))
	c := newClient(t, f, nil)
	resp, err := c.Complete(context.Background(), userReq("q"))
	if err != nil || resp.Content != "hello" {
		t.Fatalf("Complete = %+v, %v; want hello after retries", resp, err)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("server received %d requests, want 3", len(reqs))
	}
	if reqs[0].Raw != reqs[2].Raw {
		t.Errorf("retried body differs:\n%s\n%s", reqs[0].Raw, reqs[2].Raw)
	}

	// MaxRetries bounds the attempts.
	f = newFake(t, reply(503, ""))
	c = newClient(t, f, func(o *provider.Options) { o.MaxRetries = 1 })
	_, err = c.Complete(context.Background(), userReq("q"))
	if pe := asError(t, err); pe.Attempts != 2 || pe.Status != 503 || !pe.Retryable {
		t.Errorf("Complete error = %+v, want 503 after 2 attempts", pe)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("server received %d requests, want 2", n)
	}

	// A transport error (connection closed before a response) is retried too.
	n := 0
	f = newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if n++; n == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		reply(200, okBody)(w, r)
	})
	c = newClient(t, f, nil)
	if resp, err := c.Complete(context.Background(), userReq("q")); err != nil || resp.Content != "hello" {
		t.Errorf("Complete after a dropped connection = %+v, %v", resp, err)
	}
}

// TestAttemptTrace: every request sent is reported, retries included,
// with the bytes sent, its status and its error.
func TestAttemptTrace(t *testing.T) {
	f := newFake(t, reply(503, ""), reply(500, `{"error":{"message":"overloaded"}}`), reply(200, okBody))
	c := newClient(t, f, nil)
	var got []provider.Attempt
	ctx := provider.WithAttemptTrace(context.Background(), func(a provider.Attempt) { got = append(got, a) })
	resp, err := c.Complete(ctx, userReq("q"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(got) != 3 || len(reqs) != 3 {
		t.Fatalf("%d attempts traced, %d received; want 3", len(got), len(reqs))
	}
	for i, want := range []int{503, 500, 200} {
		a := got[i]
		if a.Status != want || string(a.Body) != reqs[i].Raw || string(a.Body) != string(resp.RequestBody) || (a.Err == nil) != (want == 200) {
			t.Errorf("attempt %d = status %d, err %v, body %s; want status %d, the bytes received", i+1, a.Status, a.Err, a.Body, want)
		}
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 422} {
		f := newFake(t, reply(status, `{"error":{"message":"no"}}`))
		c := newClient(t, f, nil)
		_, err := c.Complete(context.Background(), userReq("q"))
		if pe := asError(t, err); pe.Retryable || pe.Attempts != 1 || len(f.requests()) != 1 {
			t.Errorf("status %d: error %+v after %d requests, want one non-retryable attempt", status, pe, len(f.requests()))
		}
	}
}

func TestRetryAfter(t *testing.T) {
	// retry-after-ms (OpenAI) is waited for, even when the backoff is shorter.
	f := newFake(t, reply(429, `{"error":{"message":"slow"}}`, "Retry-After-Ms", "80"), reply(200, okBody))
	c := newClient(t, f, nil)
	start := time.Now()
	if _, err := c.Complete(context.Background(), userReq("q")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("retried after %v, want >= 80ms (Retry-After-Ms)", d)
	}

	// A Retry-After beyond RetryMaxDelay is not waited for.
	f = newFake(t, reply(429, `{"error":{"message":"slow"}}`, "Retry-After", "120"), reply(200, okBody))
	c = newClient(t, f, nil)
	start = time.Now()
	_, err := c.Complete(context.Background(), userReq("q"))
	pe := asError(t, err)
	if pe.RetryAfter != 120*time.Second || pe.Attempts != 1 || time.Since(start) > time.Second {
		t.Errorf("Complete error = %+v after %v, want RetryAfter 2m0s returned at once", pe, time.Since(start))
	}

	// An HTTP-date Retry-After is read against the injected clock.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f = newFake(t, reply(503, "", "Retry-After", now.Add(90*time.Second).Format(http.TimeFormat)))
	c = newClient(t, f, func(o *provider.Options) { o.Now = func() time.Time { return now } })
	_, err = c.Complete(context.Background(), userReq("q"))
	if pe := asError(t, err); pe.RetryAfter != 90*time.Second {
		t.Errorf("RetryAfter = %v, want 1m30s", pe.RetryAfter)
	}

	// A wait that would outlive the caller's deadline returns the error now.
	f = newFake(t, reply(503, "", "Retry-After", "0.5"), reply(200, okBody))
	c = newClient(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Complete(ctx, userReq("q"))
	if pe := asError(t, err); pe.Kind != provider.KindHTTPStatus || pe.Status != 503 {
		t.Errorf("Complete near deadline = %v, want the 503", err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t, reply(503, "", "Retry-After", "0.8"))
	c := newClient(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Complete(ctx, userReq("q"))
	if pe := asError(t, err); pe.Kind != provider.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("Complete = %v, want canceled", err)
	}
	if d := time.Since(start); d > 750*time.Millisecond { // the backoff asked for 800ms
		t.Errorf("cancellation took %v, want it to end the backoff at once", d)
	}
}

func TestTimeout(t *testing.T) {
	f := newFake(t, hang(nil))
	c := newClient(t, f, func(o *provider.Options) { o.Timeout = 50 * time.Millisecond; o.MaxRetries = 1 })
	start := time.Now()
	_, err := c.Complete(context.Background(), userReq("q"))
	pe := asError(t, err)
	if pe.Kind != provider.KindTimeout || !pe.Retryable || pe.Attempts != 2 {
		t.Errorf("Complete = %+v, want a retryable timeout after 2 attempts", pe)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Errorf("a per-request timeout must not look like the caller's deadline: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("two 50ms attempts took %v", d)
	}

	// A custom HTTPClient's own timeout is a timeout too.
	f = newFake(t, hang(nil))
	c = newClient(t, f, func(o *provider.Options) {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Millisecond}
		o.MaxRetries = -1
	})
	if _, err := c.Complete(context.Background(), userReq("q")); asError(t, err).Kind != provider.KindTimeout {
		t.Errorf("Complete with http.Client.Timeout = %v, want timeout", err)
	}
}

func TestCancelMidRequest(t *testing.T) {
	started := make(chan struct{})
	f := newFake(t, hang(started))
	c := newClient(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	start := time.Now()
	_, err := c.Complete(ctx, userReq("q"))
	pe := asError(t, err)
	if pe.Kind != provider.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("Complete = %v, want canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %v", d)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("server received %d requests, want 1 (no retry after cancel)", n)
	}

	// A caller deadline is canceled too, unwrapping to DeadlineExceeded.
	ctx, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	_, err = newClient(t, newFake(t, hang(nil)), nil).Complete(ctx, userReq("q"))
	if pe := asError(t, err); pe.Kind != provider.KindCanceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Complete past deadline = %v, want canceled wrapping DeadlineExceeded", err)
	}

	// An already-canceled context sends nothing.
	f = newFake(t, reply(200, okBody))
	_, err = newClient(t, f, nil).Complete(ctx, userReq("q"))
	if asError(t, err).Kind != provider.KindCanceled || len(f.requests()) != 0 {
		t.Errorf("Complete on a done context = %v after %d requests", err, len(f.requests()))
	}
}

func TestCredential(t *testing.T) {
	f := newFake(t, reply(200, okBody))
	vars := map[string]string{}
	c := newClient(t, f, func(o *provider.Options) { o.Getenv = env(vars) })
	_, err := c.Complete(context.Background(), userReq("q"))
	pe := asError(t, err)
	if pe.Kind != provider.KindMissingCredential || !errors.Is(err, provider.ErrMissingCredential) || pe.Retryable {
		t.Errorf("Complete without key = %+v, want missing_credential", pe)
	}
	if !strings.Contains(err.Error(), "TEST_API_KEY") {
		t.Errorf("error %q does not name the variable", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("server received %d requests, want 0", n)
	}

	// Read at request time: setting the variable later takes effect.
	vars["TEST_API_KEY"] = "sk-later-key-123"
	if _, err := c.Complete(context.Background(), userReq("q")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if g := f.requests()[0].Header.Get("Authorization"); g != "Bearer sk-later-key-123" {
		t.Errorf("Authorization = %q", g)
	}

	// No credential: no Authorization header.
	c = newClient(t, f, func(o *provider.Options) { o.Credential, o.Getenv = "", nil })
	if _, err := c.Complete(context.Background(), userReq("q")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if g := f.requests()[1].Header.Values("Authorization"); len(g) != 0 {
		t.Errorf("Authorization sent without a credential: %q", g)
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name string
		o    provider.Options
		want string
	}{
		{"raw key", provider.Options{Credential: testKey, Getenv: env(nil)}, "Options.Credential: must be an environment variable name"},
		{"no getenv", provider.Options{Credential: "K"}, "Options.Getenv: required"},
		{"authorization header", provider.Options{Headers: map[string]string{"authorization": "Bearer " + testKey}}, "Authorization is not allowed"},
		{"bad url", provider.Options{BaseURL: "ftp://x"}, "Options.BaseURL"},
		{"no host", provider.Options{BaseURL: "http://"}, "Options.BaseURL"},
		{"negative timeout", provider.Options{Timeout: -time.Second}, "Options.Timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.NewClient(&tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewClient = %v, want error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("NewClient error echoes the key: %v", err)
			}
		})
	}
	c, err := provider.NewClient(nil)
	if err != nil {
		t.Fatalf("NewClient(nil): %v", err)
	}
	o := c.Options()
	if o.BaseURL != "https://api.openai.com/v1" || o.Timeout != 60*time.Second || o.MaxRetries != 2 ||
		o.RetryBaseDelay != 500*time.Millisecond || o.RetryMaxDelay != 20*time.Second || o.MaxResponseBytes != 32<<20 ||
		!reflect.DeepEqual(o.AllowedOptions, provider.DefaultAllowedOptions()) {
		t.Errorf("defaults = %v", o)
	}
	c, _ = provider.NewClient(&provider.Options{MaxRetries: -1, BaseURL: "http://h/v1/chat/completions/"})
	if c.Options().MaxRetries != 0 || !strings.Contains(c.String(), "(http://h/v1/chat/completions,") {
		t.Errorf("MaxRetries -1 / full endpoint: %v", c)
	}
}

func TestRedaction(t *testing.T) {
	// Every path by which a server can echo the key back.
	handlers := map[string]http.HandlerFunc{
		"error body":     echoKey(401, `{"error":{"message":"Incorrect API key provided: %s","code":"invalid_api_key"}}`),
		"error code":     echoKey(401, `{"error":{"message":"no","code":"%s","type":"t"}}`),
		"plain body":     echoKey(500, `upstream said key=%s`),
		"key at the cut": echoKey(500, strings.Repeat("x", 195)+`%s`),
		"malformed 200":  echoKey(200, `{"choices": %s`),
		"200 error":      echoKey(200, `{"error":{"message":"bad key %s"}}`),
		"stream error": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":\"key %s revoked\"}}\n\n", strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		},
		"stream malformed": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {%s\n\n", r.Header.Get("Authorization"))
		},
	}
	// A custom header's value is a secret too (X-Api-Key carries a key):
	// the same handlers, with a client that sends the test key as a header
	// and a server that echoes that header instead of Authorization.
	asHeader := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+r.Header.Get("X-Api-Key"))
			h(w, r)
		}
	}
	for name, h := range handlers {
		for _, mode := range []string{"credential", "header"} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				handler, edit := h, func(o *provider.Options) { o.MaxRetries = -1 }
				if mode == "header" {
					handler = asHeader(h)
					edit = func(o *provider.Options) {
						o.MaxRetries, o.Credential = -1, ""
						o.Headers = map[string]string{"X-Api-Key": testKey, "X-Title": "rlmpl"}
					}
				}
				c := newClient(t, newFake(t, handler), edit)
				var rec strings.Builder
				p := provider.NewRecorder(c, &rec)
				_, err1 := p.Complete(context.Background(), userReq("q"))
				_, err2 := p.Stream(context.Background(), userReq("q"), nil)
				for _, err := range []error{err1, err2} {
					if err == nil {
						t.Fatal("no error")
					}
					for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), fmt.Sprintf("%+v", *asError(t, err))} {
						if strings.Contains(s, testKey) {
							t.Errorf("error text contains the key: %s", s)
						}
					}
					if !strings.Contains(err.Error(), "<reda") { // "<redacted>", perhaps cut by the snippet limit
						t.Errorf("error %q does not show the redaction", err)
					}
				}
				if strings.Contains(rec.String(), testKey) {
					t.Errorf("recording contains the key:\n%s", rec.String())
				}
			})
		}
	}
	c := newClient(t, newFake(t, reply(200, okBody)), nil)
	for _, s := range []string{c.String(), fmt.Sprintf("%+v", c), fmt.Sprintf("%v", c.Options()), fmt.Sprintf("%#v", c.Options())} {
		if strings.Contains(s, testKey) {
			t.Errorf("client rendering contains the key: %s", s)
		}
	}
	if s := fmt.Sprint(newClient(t, newFake(t, reply(200, okBody)), func(o *provider.Options) {
		o.BaseURL = "http://user:" + testKey + "@127.0.0.1:1/v1"
	})); strings.Contains(s, testKey) {
		t.Errorf("client rendering shows the URL password: %s", s)
	}
	if !strings.Contains(c.String(), "Credential: env(TEST_API_KEY)") {
		t.Errorf("String() = %s, want the credential as env(TEST_API_KEY)", c)
	}
}

func TestConcurrentUse(t *testing.T) {
	f := newFake(t, reply(200, okBody))
	c := newClient(t, f, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, err := c.Complete(context.Background(), userReq(fmt.Sprint(i)))
				errs <- err
			} else {
				_, err := c.Stream(context.Background(), userReq(fmt.Sprint(i)), nil)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
