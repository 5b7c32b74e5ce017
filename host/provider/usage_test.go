package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
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
		if _, err := provider.NewOpenAI(&o); err != nil {
			t.Errorf("Preset(%q): NewOpenAI: %v", name, err)
		}
	}
	if o, _ := provider.Preset("openrouter"); o.Credential != "OPENROUTER_API_KEY" || o.Model != "openrouter/free" {
		t.Errorf("Preset(openrouter) = %v", o)
	}
	if _, ok := provider.Preset("nope"); ok {
		t.Error("Preset(nope) found")
	}
}
