package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// collect returns a callback appending deltas to *ds.
func collect(ds *[]provider.Delta) func(provider.Delta) error {
	return func(d provider.Delta) error { *ds = append(*ds, d); return nil }
}

func deltaString(ds []provider.Delta) string {
	var sb strings.Builder
	for _, d := range ds {
		switch d.Kind {
		case provider.DeltaText, provider.DeltaReasoning:
			fmt.Fprintf(&sb, "%v(%q) ", d.Kind, d.Text)
		case provider.DeltaToolCall:
			fmt.Fprintf(&sb, "%v(%d,%q,%q,%q) ", d.Kind, d.ToolCall.Index, d.ToolCall.ID, d.ToolCall.Name, d.ToolCall.Arguments)
		case provider.DeltaFinish:
			fmt.Fprintf(&sb, "finish(%s) ", d.FinishReason)
		case provider.DeltaUsage:
			fmt.Fprintf(&sb, "usage(%v) ", d.Usage)
		}
	}
	return strings.TrimSpace(sb.String())
}

func TestStream(t *testing.T) {
	f := newFake(t, sse(
		`{"id":"c1","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}`,
		`{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		`{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}`,
		`{"id":"c1","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"c1","model":"m-1","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"cost":0.001}}`,
		`[DONE]`,
	))
	c := newClient(t, f, nil)
	var ds []provider.Delta
	resp, err := c.Stream(context.Background(), userReq("hi"), collect(&ds))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := provider.Response{Content: "Hello", Reasoning: "hmm", FinishReason: "stop", Model: "m-1", ID: "c1",
		Usage: provider.TokenUsage(7, 2).WithCost(0.001)}
	if !reflect.DeepEqual(withoutBody(resp), want) {
		t.Errorf("Stream =\n%+v\nwant\n%+v", resp, want)
	}
	if g, w := deltaString(ds), `reasoning("hmm") text("Hel") text("lo") finish(stop) usage(prompt=7 completion=2 total=9 cost=0.001)`; g != w {
		t.Errorf("deltas = %s\nwant     %s", g, w)
	}
	r := f.requests()[0]
	if string(resp.RequestBody) != r.Raw {
		t.Errorf("RequestBody =\n%s\nserver received\n%s", resp.RequestBody, r.Raw)
	}
	if r.Body["stream"] != true || !reflect.DeepEqual(r.Body["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("stream body = %s", r.Raw)
	}
	if g := r.Header.Get("Accept"); g != "text/event-stream" {
		t.Errorf("Accept = %q", g)
	}
}

func TestStreamToolCalls(t *testing.T) {
	f := newFake(t, sse(
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":""}}]}}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"peek","arguments":"{}"}}]}}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}}]}}]}`,
		`{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`,
		`{"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":10,"total_tokens":30}}`,
		`[DONE]`,
	))
	c := newClient(t, f, nil)
	var ds []provider.Delta
	resp, err := c.Stream(context.Background(), userReq("find go"), collect(&ds))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	wantCalls := []tokenizer.ToolCall{{ID: "call_a", Type: "function", Function: tokenizer.FunctionCall{Name: "search", Arguments: `{"q":"go"}`}}, {ID: "call_b", Type: "function", Function: tokenizer.FunctionCall{Name: "peek", Arguments: "{}"}}}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) || resp.FinishReason != "tool_calls" || resp.Usage != provider.TokenUsage(20, 10) {
		t.Errorf("Stream = %+v, want calls %+v", resp, wantCalls)
	}
	if g, w := deltaString(ds), `tool_call(0,"call_a","search","") tool_call(0,"","","{\"q\":") tool_call(1,"call_b","peek","{}") `+
		`tool_call(0,"","","\"go\"}") finish(tool_calls) usage(prompt=20 completion=10 total=30 cost=?)`; g != w {
		t.Errorf("deltas = %s\nwant     %s", g, w)
	}

	// Servers that omit index: a new id starts a call, fragments continue it.
	f = newFake(t, sse(
		`{"choices":[{"delta":{"tool_calls":[{"id":"x1","function":{"name":"a","arguments":"{\"n\""}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"id":"x2","function":{"name":"b","arguments":"{}"}}]}}]}`,
		`[DONE]`,
	))
	resp, err = newClient(t, f, nil).Stream(context.Background(), userReq("q"), nil)
	if want := []tokenizer.ToolCall{{ID: "x1", Type: "function", Function: tokenizer.FunctionCall{Name: "a", Arguments: `{"n":1}`}}, {ID: "x2", Type: "function", Function: tokenizer.FunctionCall{Name: "b", Arguments: "{}"}}}; err != nil || !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("Stream without indexes = %+v, %v; want %+v", resp.ToolCalls, err, want)
	}
}

func TestStreamFraming(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // content
	}{
		{"comments and keepalives", ": OPENROUTER PROCESSING\n\n: ping\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", "a"},
		{"CRLF", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n", "ab"},
		{"no space after colon", "data:{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata:[DONE]\n\n", "a"},
		{"event and id fields", "event: message\nid: 1\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n", "a"},
		{"multi-line data", "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", "a"},
		{"done without final blank line", "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]", "a"},
		{"reasoning field (openrouter, ollama)", "data: {\"choices\":[{\"delta\":{\"reasoning\":\"r\",\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", "a"},
		{"other choices ignored", "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"x\"}},{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if !strings.Contains(body, "[DONE]") {
				body += "data: [DONE]\n\n"
			}
			resp, err := newClient(t, newFake(t, rawSSE(body)), nil).Stream(context.Background(), userReq("q"), nil)
			if err != nil || resp.Content != tc.want {
				t.Errorf("Stream = %q, %v; want %q", resp.Content, err, tc.want)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	chunk := `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"part"}}]}` + "\n\n"
	tests := []struct {
		name    string
		body    string
		kind    provider.Kind
		message string
	}{
		{"mid-stream provider error", chunk + `data: {"id":"c","object":"chat.completion.chunk","error":{"code":"server_error","message":"upstream died"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}` + "\n\n",
			provider.KindProviderError, "provider: provider_error 200 code=server_error: upstream died"},
		{"malformed chunk", chunk + "data: {\"choices\":[{\"delta\":\n\n",
			provider.KindMalformedResponse, "invalid stream chunk"},
		{"missing done", chunk, provider.KindMalformedResponse, "stream ended without [DONE]"},
		{"bad content", chunk + `data: {"choices":[{"delta":{"content":7}}]}` + "\n\n", provider.KindMalformedResponse, "delta.content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, rawSSE(tc.body))
			var ds []provider.Delta
			resp, err := newClient(t, f, nil).Stream(context.Background(), userReq("q"), collect(&ds))
			pe := asError(t, err)
			if pe.Kind != tc.kind || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("Stream error = %v (%v), want %v containing %q", err, pe.Kind, tc.kind, tc.message)
			}
			if resp.Content != "part" || len(ds) != 1 {
				t.Errorf("partial response = %+v with %d deltas, want the first chunk", resp, len(ds))
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("a stream that delivered deltas was retried: %d requests", n)
			}
		})
	}
}

func TestStreamRetryBeforeDelivery(t *testing.T) {
	f := newFake(t, reply(429, `{"error":{"message":"busy"}}`), sse(`{"choices":[{"delta":{"content":"ok"}}]}`, `[DONE]`))
	resp, err := newClient(t, f, nil).Stream(context.Background(), userReq("q"), nil)
	if err != nil || resp.Content != "ok" || len(f.requests()) != 2 {
		t.Errorf("Stream = %+v, %v after %d requests; want ok after one retry", resp, err, len(f.requests()))
	}
}

func TestStreamCallbackError(t *testing.T) {
	stop := errors.New("enough")
	f := newFake(t, sse(`{"choices":[{"delta":{"content":"a"}}]}`, `{"choices":[{"delta":{"content":"b"}}]}`, `[DONE]`))
	n := 0
	resp, err := newClient(t, f, nil).Stream(context.Background(), userReq("q"), func(provider.Delta) error { n++; return stop })
	if err != stop || n != 1 || resp.Content != "a" || len(f.requests()) != 1 {
		t.Errorf("Stream = %+v, %v after %d callbacks; want the callback's error after 1", resp, err, n)
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ { // steady progress: each gap is within Timeout
			io.WriteString(w, `data: {"choices":[{"delta":{"content":"x"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
		<-r.Context().Done() // then a stall
	})
	c := newClient(t, f, func(o *provider.Options) { o.Timeout = 100 * time.Millisecond })
	resp, err := c.Stream(context.Background(), userReq("q"), nil)
	if pe := asError(t, err); pe.Kind != provider.KindTimeout || resp.Content != "xxx" {
		t.Errorf("Stream = %q, %v; want xxx then a timeout", resp.Content, err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestStreamCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"x"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	resp, err := newClient(t, f, nil).Stream(ctx, userReq("q"), func(provider.Delta) error { cancel(); return nil })
	if pe := asError(t, err); pe.Kind != provider.KindCanceled || !errors.Is(err, context.Canceled) || resp.Content != "x" {
		t.Errorf("Stream = %q, %v; want x then canceled", resp.Content, err)
	}
}

func TestStreamJSONFallback(t *testing.T) {
	// A server that ignores stream:true and answers with one JSON body.
	f := newFake(t, reply(200, okBody))
	var ds []provider.Delta
	resp, err := newClient(t, f, nil).Stream(context.Background(), userReq("q"), collect(&ds))
	if err != nil || resp.Content != "hello" {
		t.Fatalf("Stream = %+v, %v", resp, err)
	}
	if g, w := deltaString(ds), `text("hello") finish(stop) usage(prompt=9 completion=1 total=10 cost=?)`; g != w {
		t.Errorf("deltas = %s, want %s", g, w)
	}
}

func TestStreamMislabeled(t *testing.T) {
	f := newFake(t, reply(200, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", "Content-Type", "application/json"))
	resp, err := newClient(t, f, nil).Stream(context.Background(), userReq("q"), nil)
	if err != nil || resp.Content != "a" {
		t.Errorf("Stream of a mislabeled event stream = %+v, %v", resp, err)
	}
}

func TestResponseLimit(t *testing.T) {
	big := `{"choices":[{"message":{"content":"` + strings.Repeat("x", 2000) + `"}}]}`
	c := newClient(t, newFake(t, reply(200, big)), func(o *provider.Options) { o.MaxResponseBytes = 1000 })
	if _, err := c.Complete(context.Background(), userReq("q")); asError(t, err).Kind != provider.KindMalformedResponse {
		t.Errorf("Complete over the limit = %v, want malformed_response", err)
	}
	c = newClient(t, newFake(t, rawSSE("data: "+big+"\n\ndata: [DONE]\n\n")), func(o *provider.Options) { o.MaxResponseBytes = 1000 })
	if _, err := c.Stream(context.Background(), userReq("q"), nil); asError(t, err).Kind != provider.KindMalformedResponse {
		t.Errorf("Stream over the limit = %v, want malformed_response", err)
	}
}
