package provider_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
)

// bodyTransport answers every request with a fixed status, content type and
// body, in memory.
type bodyTransport struct {
	status int
	ctype  string
	body   string
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: b.status, Header: http.Header{"Content-Type": {b.ctype}},
		Body: io.NopCloser(strings.NewReader(b.body)), Request: r}, nil
}

func fuzzClient(t *testing.T, api string, status int, ctype, body string) *provider.Client {
	c, err := provider.NewClient(&provider.Options{API: api, BaseURL: "http://fuzz/v1", Model: "m", MaxRetries: -1,
		Timeout: time.Second, HTTPClient: &http.Client{Transport: bodyTransport{status, ctype, body}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkResult fails unless err is nil or a *provider.Error, and a
// successful response is consistent.
func checkResult(t *testing.T, resp provider.Response, err error) {
	t.Helper()
	if err != nil {
		if _, ok := err.(*provider.Error); !ok {
			t.Fatalf("error %v is %T, want *provider.Error", err, err)
		}
		return
	}
	u := resp.Usage
	if !u.PromptKnown && u.PromptTokens != 0 || !u.CompletionKnown && u.CompletionTokens != 0 || !u.CostKnown && u.Cost != 0 {
		t.Fatalf("unknown usage field with a value: %+v", u)
	}
}

// FuzzDecodeResponse: any body, with any status, gives a Response or an
// *Error and never panics, in either dialect.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(200, okBody)
	f.Add(200, `{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]}}],"usage":{"prompt_tokens":1.5}}`)
	f.Add(400, `{"error":{"message":"m","code":12}}`)
	f.Add(500, `{"object":"error","message":"m"}`)
	f.Add(200, `{"error":"x"}`)
	f.Add(200, `{"id":"m","type":"message","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"f","input":{"x":1}},{"type":"thinking","thinking":"h"}],"stop_reason":"tool_use","usage":{"input_tokens":3,"cache_read_input_tokens":2.5,"output_tokens":1}}`)
	f.Add(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	f.Add(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 99999999999999999999 tokens > 1 maximum"}}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 100 || status > 999 {
			status = 200
		}
		for _, api := range provider.APIs() {
			resp, err := fuzzClient(t, api, status, "application/json", body).Complete(context.Background(), userReq("q"))
			checkResult(t, resp, err)
		}
	})
}

// FuzzStream: any event-stream body gives a Response or an *Error, and the
// deltas delivered assemble to the returned content, in either dialect.
func FuzzStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n\n")
	f.Add(": c\r\ndata:{\"choices\":[],\"usage\":{\"total_tokens\":2}}\r\n\r\ndata: [DONE]")
	f.Add("data: {\"error\":{\"message\":\"x\"}}\n\n")
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n")
	f.Add("data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		for _, api := range provider.APIs() {
			var text strings.Builder
			resp, err := fuzzClient(t, api, 200, "text/event-stream", body).Stream(context.Background(), userReq("q"),
				func(d provider.Delta) error {
					if d.Kind == provider.DeltaText {
						text.WriteString(d.Text)
					}
					return nil
				})
			checkResult(t, resp, err)
			if resp.Content != text.String() {
				t.Fatalf("%s: assembled %q, deltas say %q", api, resp.Content, text.String())
			}
		}
	})
}
