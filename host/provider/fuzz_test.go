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

func fuzzClient(t *testing.T, status int, ctype, body string) *provider.OpenAI {
	c, err := provider.NewOpenAI(&provider.Options{BaseURL: "http://fuzz/v1", Model: "m", MaxRetries: -1,
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
// *Error and never panics.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(200, okBody)
	f.Add(200, `{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]}}],"usage":{"prompt_tokens":1.5}}`)
	f.Add(400, `{"error":{"message":"m","code":12}}`)
	f.Add(500, `{"object":"error","message":"m"}`)
	f.Add(200, `{"error":"x"}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 100 || status > 999 {
			status = 200
		}
		resp, err := fuzzClient(t, status, "application/json", body).Complete(context.Background(), userReq("q"))
		checkResult(t, resp, err)
	})
}

// FuzzStream: any event-stream body gives a Response or an *Error, and the
// deltas delivered assemble to the returned content.
func FuzzStream(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]}}]}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n\n")
	f.Add(": c\r\ndata:{\"choices\":[],\"usage\":{\"total_tokens\":2}}\r\n\r\ndata: [DONE]")
	f.Add("data: {\"error\":{\"message\":\"x\"}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		var text strings.Builder
		resp, err := fuzzClient(t, 200, "text/event-stream", body).Stream(context.Background(), userReq("q"),
			func(d provider.Delta) error {
				if d.Kind == provider.DeltaText {
					text.WriteString(d.Text)
				}
				return nil
			})
		checkResult(t, resp, err)
		if resp.Content != text.String() {
			t.Fatalf("assembled %q, deltas say %q", resp.Content, text.String())
		}
	})
}
