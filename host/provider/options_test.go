package provider_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func TestApplyOptions(t *testing.T) {
	var r tokenizer.Request
	err := provider.ApplyOptions(&r, map[string]any{
		"max_tokens": 64.0, "temperature": 0, "top_p": float32(0.5), "seed": int64(3), "stop": []any{"\n", "END"},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "plan", "schema": map[string]any{"type": "object"}}},
		"tool_choice":     "auto", "reasoning": map[string]any{"effort": "low"},
	})
	if err != nil {
		t.Fatalf("ApplyOptions: %v", err)
	}
	want := tokenizer.Request{MaxTokens: 64, Temperature: new(0.0), TopP: new(0.5), Seed: new(int64(3)),
		Stop: []string{"\n", "END"},
		ResponseFormat: &tokenizer.ResponseFormat{Type: "json_schema",
			JSONSchema: &tokenizer.JSONSchema{Name: "plan", Schema: json.RawMessage(`{"type":"object"}`)}},
		Extra: map[string]json.RawMessage{"tool_choice": json.RawMessage(`"auto"`), "reasoning": json.RawMessage(`{"effort":"low"}`)},
	}
	if !reflect.DeepEqual(r, want) {
		g, _ := json.Marshal(r)
		w, _ := json.Marshal(want)
		t.Errorf("ApplyOptions =\n%s\nwant\n%s", g, w)
	}
	for opts, msg := range map[string]map[string]any{
		"options.max_tokens: must be a non-negative integer": {"max_tokens": 1.5},
		"options.temperature: must be a number":              {"temperature": "hot"},
		"options.stop: must be a string":                     {"stop": 3},
		"options.tools: cannot be set as an option":          {"tools": []any{}},
		"options.stream: cannot be set":                      {"stream": true},
	} {
		var r tokenizer.Request
		err := provider.ApplyOptions(&r, msg)
		if err == nil || !strings.Contains(err.Error(), opts) {
			t.Errorf("ApplyOptions(%v) = %v, want %q", msg, err, opts)
		}
	}
}
