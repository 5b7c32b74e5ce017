package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// TestLlamaServer runs against a real llama.cpp llama-server when
// RLMPL_LLAMA_URL is set (for example http://127.0.0.1:18080/v1; see
// shared/tools/llama/README.md for a tiny offline model). It checks the
// wire format end to end: exact usage, streaming with the usage chunk, and
// a json_schema response format. The model's text is not checked (random
// weights produce gibberish), only its shape.
func TestLlamaServer(t *testing.T) {
	base := os.Getenv("RLMPL_LLAMA_URL")
	if base == "" {
		t.Skip("RLMPL_LLAMA_URL not set")
	}
	c, err := provider.NewClient(&provider.Options{BaseURL: base, Model: "tiny", Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var p provider.Provider = c
	if path := os.Getenv("RLMPL_LLAMA_RECORD"); path != "" { // regenerates testdata/llama.jsonl
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		p = provider.NewRecorder(c, f)
	}
	ctx := context.Background()
	req, js := llamaRequests()
	resp, err := p.Complete(ctx, req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	u := resp.Usage
	if !u.PromptKnown || !u.CompletionKnown || !u.TotalKnown || u.PromptTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %v, want exact known counts", u)
	}
	if u.CostKnown {
		t.Errorf("llama-server reported a cost: %v", u)
	}
	if resp.FinishReason == "" || resp.Model == "" {
		t.Errorf("response = %+v, want a finish reason and a model", resp)
	}
	t.Logf("complete: %q finish=%s usage=%v", resp.Content, resp.FinishReason, u)

	var n int
	sresp, err := p.Stream(ctx, req, func(provider.Delta) error { n++; return nil })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if sresp.Content != resp.Content || sresp.Usage.PromptTokens != u.PromptTokens || !sresp.Usage.PromptKnown {
		t.Errorf("stream = %q %v, want the same text and usage as Complete (%q %v) at temperature 0", sresp.Content, sresp.Usage, resp.Content, u)
	}
	t.Logf("stream: %d deltas, usage=%v", n, sresp.Usage)

	jresp, err := p.Complete(ctx, js)
	if err != nil {
		t.Fatalf("Complete json_schema: %v", err)
	}
	var v struct{ OK *bool }
	if err := json.Unmarshal([]byte(strings.TrimSpace(jresp.Content)), &v); err != nil || v.OK == nil {
		t.Errorf("json_schema content = %q (%v), want {\"ok\": bool}", jresp.Content, err)
	}

	// A real provider error body: an unparsable grammar is a 400 with
	// {"error":{"code":400,"message":...,"type":"invalid_request_error"}}.
	g, err := provider.NewClient(&provider.Options{BaseURL: base, Model: "tiny", AllowedOptions: []string{"grammar"}})
	if err != nil {
		t.Fatal(err)
	}
	bad := req
	bad.Extra = map[string]json.RawMessage{"grammar": json.RawMessage(`"root ::= ("`)}
	_, err = g.Complete(ctx, bad)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindProviderError || pe.Status != 400 || pe.Code != "400" ||
		pe.Type != "invalid_request_error" || pe.Retryable || pe.Attempts != 1 {
		t.Errorf("bad grammar = %#v, want a non-retryable provider_error 400", err)
	}
	t.Logf("bad grammar: %v", err)
}

// llamaRequests are the requests of TestLlamaServer: a plain one and a
// json_schema one.
func llamaRequests() (plain, schema tokenizer.Request) {
	plain = tokenizer.Request{
		Messages: []tokenizer.Message{
			{Role: tokenizer.RoleSystem, Content: "You are a helpful assistant."},
			{Role: tokenizer.RoleUser, Content: "Say hello."},
		},
		MaxTokens:   8,
		Temperature: new(0.0),
		Seed:        new(int64(1)),
	}
	schema = plain
	schema.MaxTokens = 48
	schema.ResponseFormat = &tokenizer.ResponseFormat{Type: "json_schema", JSONSchema: &tokenizer.JSONSchema{Name: "answer",
		Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}}
	return plain, schema
}

// TestReplayLlamaRecording replays a session recorded from a real
// llama-server (RLMPL_LLAMA_RECORD=$PWD/testdata/llama.jsonl with
// TestLlamaServer), so the real wire shapes stay covered offline.
func TestReplayLlamaRecording(t *testing.T) {
	f, err := os.Open("testdata/llama.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rp, err := provider.NewReplayer(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req, js := llamaRequests()
	resp, err := rp.Complete(ctx, req)
	if err != nil || !resp.Usage.PromptKnown || resp.Usage.PromptTokens != 24 || resp.Usage.CostKnown || resp.FinishReason != "length" {
		t.Errorf("replayed Complete = %+v, %v", resp, err)
	}
	var ds []provider.Delta
	sresp, err := rp.Stream(ctx, req, collect(&ds))
	if err != nil || sresp.Content != resp.Content || len(ds) == 0 || ds[len(ds)-1].Kind != provider.DeltaUsage {
		t.Errorf("replayed Stream = %+v, %v, deltas %s", sresp, err, deltaString(ds))
	}
	jresp, err := rp.Complete(ctx, js)
	if err != nil || !json.Valid([]byte(jresp.Content)) {
		t.Errorf("replayed json_schema = %q, %v", jresp.Content, err)
	}
	if rp.Remaining() != 0 {
		t.Errorf("Remaining = %d", rp.Remaining())
	}
}
