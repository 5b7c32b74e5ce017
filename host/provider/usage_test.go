package provider_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func TestUsageJSON(t *testing.T) {
	tests := []struct {
		u    provider.Usage
		json string
		text string
	}{
		{provider.Usage{}, `{}`, "prompt=? completion=? total=? cost=?"},
		{provider.TokenUsage(0, 0), `{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`, "prompt=0 completion=0 total=0 cost=?"},
		{provider.TokenUsage(3, 2).WithCost(0.25), `{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"cost":0.25}`, "prompt=3 completion=2 total=5 cost=0.25"},
		{provider.Usage{}.WithCost(0), `{"cost":0}`, "prompt=? completion=? total=? cost=0"},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.u)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.u, b, err, tc.json)
		}
		var back provider.Usage
		if err := json.Unmarshal(b, &back); err != nil || back != tc.u {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tc.u)
		}
		if g := tc.u.String(); g != tc.text {
			t.Errorf("String() = %q, want %q", g, tc.text)
		}
	}
	var u provider.Usage
	if err := json.Unmarshal([]byte(`{"prompt_tokens":null,"total_tokens":4}`), &u); err != nil || u.PromptKnown || !u.TotalKnown {
		t.Errorf("null field: %+v, %v", u, err)
	}
}

func TestDeltaKindText(t *testing.T) {
	for k := provider.DeltaText; k <= provider.DeltaUsage; k++ {
		b, _ := k.MarshalText()
		var back provider.DeltaKind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("DeltaKind %v round trip = %v, %v", k, back, err)
		}
	}
	var k provider.DeltaKind
	if err := k.UnmarshalText([]byte("nope")); err == nil {
		t.Error("UnmarshalText(nope) succeeded")
	}
}

func TestResponseMessage(t *testing.T) {
	r := provider.Response{Content: "c", Reasoning: "r", ToolCalls: []tokenizer.ToolCall{{ID: "1", Type: "function", Function: tokenizer.FunctionCall{Name: "f"}}}}
	m := r.Message()
	if m.Role != tokenizer.RoleAssistant || m.Content != "c" || m.Reasoning != "r" || len(m.ToolCalls) != 1 {
		t.Errorf("Message() = %+v", m)
	}
	if g := (tokenizer.Message{Parts: []tokenizer.Part{tokenizer.TextPart("a"), tokenizer.ImagePart("u", ""), tokenizer.TextPart("b")}}).Text(); g != "ab" {
		t.Errorf("Text() = %q", g)
	}
}

func TestPreset(t *testing.T) {
	for _, name := range provider.PresetNames() {
		o, ok := provider.Preset(name)
		if !ok {
			t.Fatalf("Preset(%q) not found", name)
		}
		o.Getenv = func(string) string { return "" }
		if _, err := provider.NewClient(&o); err != nil {
			t.Errorf("Preset(%q): NewClient: %v", name, err)
		}
	}
	if o, _ := provider.Preset("openrouter"); o.Credential != "OPENROUTER_API_KEY" || o.Model != "openrouter/free" {
		t.Errorf("Preset(openrouter) = %v", o)
	}
	if _, ok := provider.Preset("nope"); ok {
		t.Error("Preset(nope) found")
	}
}

// TestUsageCacheDetails: the cache and reasoning counts of each dialect
// are read, and written back in OpenAI's shape.
func TestUsageCacheDetails(t *testing.T) {
	tests := []struct {
		name, in string
		want     provider.Usage
	}{
		{"openai", `{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":256}}`,
			provider.Usage{PromptTokens: 2006, CompletionTokens: 300, TotalTokens: 2306, CachedTokens: 1920, ReasoningTokens: 256,
				PromptKnown: true, CompletionKnown: true, TotalKnown: true, CachedKnown: true, ReasoningKnown: true}},
		{"openrouter write", `{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":8}}`,
			provider.Usage{PromptTokens: 10, CachedTokens: 0, CacheWriteTokens: 8, PromptKnown: true, CachedKnown: true, CacheWriteKnown: true}},
		{"deepseek", `{"prompt_tokens":100,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
			provider.Usage{PromptTokens: 100, CachedTokens: 64, PromptKnown: true, CachedKnown: true}},
		{"anthropic names", `{"prompt_tokens":100,"cache_read_input_tokens":50,"cache_creation_input_tokens":20}`,
			provider.Usage{PromptTokens: 100, CachedTokens: 50, CacheWriteTokens: 20, PromptKnown: true, CachedKnown: true, CacheWriteKnown: true}},
		{"null details", `{"prompt_tokens":5,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":null}}`,
			provider.Usage{PromptTokens: 5, PromptKnown: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var u provider.Usage
			if err := json.Unmarshal([]byte(tc.in), &u); err != nil || u != tc.want {
				t.Fatalf("Unmarshal = %+v, %v; want %+v", u, err, tc.want)
			}
			b, _ := json.Marshal(u)
			var back provider.Usage
			if err := json.Unmarshal(b, &back); err != nil || back != u {
				t.Errorf("round trip through %s = %+v, %v", b, back, err)
			}
		})
	}
	if g := provider.TokenUsage(3, 2).WithCached(1).WithReasoning(1).String(); g != "prompt=3 completion=2 total=5 cost=? cached=1 reasoning=1" {
		t.Errorf("String() = %q", g)
	}
}

// TestPricesPriceTheUsage: a client with a price table gives a response
// of a priced model its cost, streamed or not (the usage delta too), in
// place of one the provider reported; an unpriced model keeps what the
// provider said.
func TestPricesPriceTheUsage(t *testing.T) {
	const reported = `{"id":"c","model":"test-model","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],
 "usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100,"prompt_tokens_details":{"cached_tokens":400},"cost":0.5}}`
	sse := providertest.SSE(`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100,"prompt_tokens_details":{"cached_tokens":400}}}`, "[DONE]")
	prices := provider.Prices{"test-*": {Input: 2, CachedInput: 0.5, Output: 10}}
	want := (600*2.0 + 400*0.5 + 100*10.0) / 1e6
	for _, tc := range []struct {
		name, model string
		stream      bool
		cost        float64
		known       bool
	}{
		{"priced", "test-model", false, want, true},
		{"priced stream", "test-model", true, want, true},
		{"unpriced, reported", "other", false, 0.5, true},
		{"unpriced stream", "other", true, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply(200, reported))
			if tc.stream {
				f = newFake(t, sse)
			}
			c := newClient(t, f, func(o *provider.Options) { o.Prices, o.Model = prices, tc.model })
			var resp provider.Response
			var delta *provider.Usage
			var err error
			if tc.stream {
				resp, err = c.Stream(context.Background(), userReq("x"), func(d provider.Delta) error {
					if d.Kind == provider.DeltaUsage {
						delta = d.Usage
					}
					return nil
				})
			} else {
				resp, err = c.Complete(context.Background(), userReq("x"))
			}
			u := resp.Usage
			if err != nil || u.CostKnown != tc.known || u.Cost < tc.cost-1e-12 || u.Cost > tc.cost+1e-12 {
				t.Fatalf("usage %+v, %v; want cost %v known %t", u, err, tc.cost, tc.known)
			}
			if tc.stream && (delta == nil || *delta != u) {
				t.Errorf("usage delta %+v, want %+v", delta, u)
			}
		})
	}
}
