package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// benchEnv is a local server answering every POST with a fixed completion,
// a client for it, a typical request (system prompt, ~1 KiB user message,
// one tool) and the exact body the client sends for that request.
type benchEnv struct {
	srv    *httptest.Server
	hc     *http.Client
	client *provider.Client
	req    tokenizer.Request
	body   []byte
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	e := &benchEnv{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.body == nil {
			e.body, _ = io.ReadAll(r.Body)
		} else {
			io.Copy(io.Discard, r.Body)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okBody)
	}))
	b.Cleanup(e.srv.Close)
	e.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	var err error
	e.client, err = provider.NewClient(&provider.Options{
		BaseURL: e.srv.URL + "/v1", Model: "bench", Credential: "K",
		Getenv: func(string) string { return testKey }, HTTPClient: e.hc,
	})
	if err != nil {
		b.Fatal(err)
	}
	e.req = benchRequest()
	if _, err := e.client.Complete(context.Background(), e.req); err != nil { // captures body
		b.Fatal(err)
	}
	return e
}

// benchRequest is a typical request: a system prompt, a ~1 KiB user
// message, one tool.
func benchRequest() tokenizer.Request {
	return tokenizer.Request{
		Messages: []tokenizer.Message{
			{Role: tokenizer.RoleSystem, Content: "You are a planner. Answer with one plan."},
			{Role: tokenizer.RoleUser, Content: strings.Repeat("Context metadata and goal. ", 40)},
		},
		Tools:       []tokenizer.Tool{{Function: tokenizer.FunctionDef{Name: "search", Description: "search the context", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}},
		MaxTokens:   256,
		Temperature: new(0.0),
	}
}

// raw is the baseline: a plain net/http POST of the same body with the same
// headers, reading the whole answer, without any encoding or decoding.
func (e *benchEnv) raw(b *testing.B) {
	hreq, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/chat/completions", bytes.NewReader(e.body))
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+testKey)
	res, err := e.hc.Do(hreq)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

func (e *benchEnv) complete(b *testing.B) {
	if _, err := e.client.Complete(context.Background(), e.req); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkComplete measures one request through the client and through a
// raw POST of the same body, side by side.
func BenchmarkComplete(b *testing.B) {
	e := newBenchEnv(b)
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.raw(b)
		}
	})
	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.complete(b)
		}
	})
}

// BenchmarkCompleteOverhead interleaves the raw POST and the client call in
// one loop, so both see the same machine load, and reports the client's
// time as a ratio of the raw POST's (x-raw) and the absolute overhead per
// request (overhead-ns/op). ns/op is the sum of both.
func BenchmarkCompleteOverhead(b *testing.B) {
	e := newBenchEnv(b)
	var raw, client time.Duration
	for b.Loop() {
		t0 := time.Now()
		e.raw(b)
		t1 := time.Now()
		e.complete(b)
		client += time.Since(t1)
		raw += t1.Sub(t0)
	}
	b.ReportMetric(float64(client)/float64(raw), "x-raw")
	b.ReportMetric(float64(client-raw)/float64(b.N), "overhead-ns/op")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkClientNoNetwork measures the client's own work (validation,
// encoding, headers, decoding) against a transport that answers at once:
// steadier than the loopback benchmarks on a loaded machine.
func BenchmarkClientNoNetwork(b *testing.B) {
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body)
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(okBody)), Request: r}, nil
	})}
	c, err := provider.NewClient(&provider.Options{BaseURL: "http://bench/v1", Model: "bench", Credential: "K",
		Getenv: func(string) string { return testKey }, HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolvedOverhead is BenchmarkCompleteOverhead for the host's
// path: every call resolves its provider through the layers (call settings,
// a configuration file, the environment, the preset) and builds its client
// before sending.
func BenchmarkResolvedOverhead(b *testing.B) {
	e := newBenchEnv(b)
	cfg, err := provider.ParseConfig("p.toml", []byte("[providers.openai]\nmodel = \"bench\"\n"))
	if err != nil {
		b.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "OPENAI_API_KEY":
			return testKey
		case "OPENAI_BASE_URL":
			return e.srv.URL + "/v1"
		}
		return ""
	}
	var raw, client time.Duration
	for b.Loop() {
		t0 := time.Now()
		e.raw(b)
		t1 := time.Now()
		r, err := provider.Resolve("openai", provider.Settings{}, cfg, getenv)
		if err != nil {
			b.Fatal(err)
		}
		r.Options.HTTPClient = e.hc
		c, err := provider.NewClient(&r.Options)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), e.req); err != nil {
			b.Fatal(err)
		}
		client += time.Since(t1)
		raw += t1.Sub(t0)
	}
	b.ReportMetric(float64(client)/float64(raw), "x-raw")
	b.ReportMetric(float64(client-raw)/float64(b.N), "overhead-ns/op")
}
