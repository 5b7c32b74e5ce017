package tokenizer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fullRequest uses every field of the request.
func fullRequest() Request {
	return Request{
		Model: "gpt-4o",
		Messages: []Message{
			{Role: RoleSystem, Content: "Be brief."},
			{Role: RoleUser, Name: "ann", Parts: []Part{TextPart("What is this?"), ImagePart("https://example.org/a.png", DetailLow)}},
			{Role: RoleAssistant, Reasoning: "look it up", ToolCalls: []ToolCall{{ID: "call_1",
				Function: FunctionCall{Name: "lookup", Arguments: `{"q":"a"}`}}}},
			{Role: RoleTool, ToolCallID: "call_1", Content: ""},
		},
		Tools:          []Tool{{Function: FunctionDef{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		MaxTokens:      64,
		Temperature:    new(0.0),
		TopP:           new(0.5),
		Stop:           []string{"\n"},
		Seed:           new(int64(7)),
		ResponseFormat: &ResponseFormat{Type: "json_object"},
		Extra:          map[string]json.RawMessage{"user": json.RawMessage(`"u1"`), "tool_choice": json.RawMessage(`"auto"`)},
		Cache:          CacheHints{Breakpoints: []int{0, 2}, TTL: "1h"},
	}
}

// TestRequestWire pins the wire body: field order, content forms,
// defaulted types, no reasoning and no cache hints, Extra last in key
// order.
func TestRequestWire(t *testing.T) {
	got, err := json.Marshal(fullRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-4o","messages":[` +
		`{"role":"system","content":"Be brief."},` +
		`{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"https://example.org/a.png","detail":"low"}}],"name":"ann"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"a\"}"}}]},` +
		`{"role":"tool","content":"","tool_call_id":"call_1"}],` +
		`"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}],` +
		`"max_tokens":64,"temperature":0,"top_p":0.5,"stop":["\n"],"seed":7,"response_format":{"type":"json_object"},` +
		`"tool_choice":"auto","user":"u1"}`
	if string(got) != want {
		t.Fatalf("json.Marshal =\n%s\nwant\n%s", got, want)
	}
	// The wire body decodes back to the request, minus what is not sent.
	var back Request
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != want {
		t.Fatalf("round trip =\n%s\nwant\n%s", again, want)
	}
	if back.Messages[2].Reasoning != "" || back.Messages[1].Parts[1] != ImagePart("https://example.org/a.png", DetailLow) {
		t.Errorf("decoded messages = %+v", back.Messages)
	}
}

func TestRequestWireRejects(t *testing.T) {
	for name, r := range map[string]Request{
		"typed extra":   {Extra: map[string]json.RawMessage{"temperature": json.RawMessage(`1`)}},
		"invalid extra": {Extra: map[string]json.RawMessage{"user": json.RawMessage(`{`)}},
		"part type":     {Messages: []Message{{Role: RoleUser, Parts: []Part{{Type: "audio"}}}}},
	} {
		if b, err := json.Marshal(r); err == nil {
			t.Errorf("%s: json.Marshal = %s, want an error", name, b)
		}
	}
	var r Request
	if err := json.Unmarshal([]byte(`{"messages":[],"stream":true,"stream_options":{"include_usage":true}}`), &r); err != nil || r.Extra != nil {
		t.Errorf("stream fields: Extra = %v, %v; want them dropped", r.Extra, err)
	}
}

func TestRequestClone(t *testing.T) {
	r := fullRequest()
	c := r.Clone()
	if !reflect.DeepEqual(c, r) {
		t.Fatalf("Clone = %+v, want %+v", c, r)
	}
	c.Messages[1].Parts[0].Text = "changed"
	c.Messages[2].ToolCalls[0].ID = "changed"
	*c.Temperature = 1
	c.Extra["user"] = nil
	c.Cache.Breakpoints[0] = 9
	if !reflect.DeepEqual(fullRequest(), r) {
		t.Errorf("changing the clone changed the original: %+v", r)
	}
}

func TestLastUserText(t *testing.T) {
	r := fullRequest()
	if got := r.LastUserText(); got != "What is this?" {
		t.Errorf("LastUserText = %q", got)
	}
	if got := (&Request{}).LastUserText(); got != "" {
		t.Errorf("LastUserText of no messages = %q", got)
	}
}

// TestImageParts checks I7 for content parts: an image is charged by the
// model family's published rule, Exact only for a fixed low-detail cost,
// and never as the text of its URL.
func TestImageParts(t *testing.T) {
	r := newTestRegistry(t)
	counter := func(model string) Counter {
		if model == "" {
			return r.Estimator()
		}
		c, err := r.Counter(model)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	o, _ := r.Encoding(O200kBase)
	text := "What is in this picture?"
	url := "https://example.org/" + strings.Repeat("long/", 50) + "a.png"
	for _, tc := range []struct {
		name, model string
		parts       []Part
		tokens      int // -1: do not check
		method      Method
	}{
		{"gpt-4o low", "gpt-4o", []Part{TextPart(text), ImagePart(url, DetailLow)}, o.Count(text) + 85, Exact},
		{"gpt-4o snapshot low", "gpt-4o-2024-08-06", []Part{ImagePart(url, DetailLow)}, 85, Exact},
		{"gpt-4o-mini low", "gpt-4o-mini", []Part{ImagePart(url, DetailLow)}, 2833, Exact},
		{"gpt-4.1 low", "gpt-4.1", []Part{ImagePart(url, DetailLow)}, 85, Exact},
		{"fine-tune low", "ft:gpt-4o-2024-08-06:org::x", []Part{ImagePart(url, DetailLow)}, 85, Exact},
		{"gpt-4o high", "gpt-4o", []Part{ImagePart(url, DetailHigh)}, 1445, Estimated},
		{"gpt-4o auto", "gpt-4o", []Part{ImagePart(url, "")}, 1445, Estimated},
		{"gpt-4o-mini high", "gpt-4o-mini-2024-07-18", []Part{ImagePart(url, DetailHigh)}, 48169, Estimated},
		{"patch model low", "gpt-4.1-mini", []Part{ImagePart(url, DetailLow)}, 2489, Estimated},
		{"unpublished family", "o3", []Part{ImagePart(url, DetailLow)}, DefaultImageMax, Estimated},
		{"estimator", "", []Part{ImagePart(url, DetailLow)}, DefaultImageMax, Estimated},
		{"one text part", "gpt-4o", []Part{TextPart(text)}, o.Count(text), Exact},
		{"two text parts", "gpt-4o", []Part{TextPart(text), TextPart(text)}, 2*o.Count(text) + 1, Estimated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := counter(tc.model).CountRequest(&Request{Messages: []Message{{Role: RoleUser, Parts: tc.parts}}})
			checkStagesSum(t, b)
			c := b.Stages[0].Count
			if b.Stages[0].Kind != StageContent || c.Tokens != tc.tokens || c.Method != tc.method || c.Basis != BasisParts {
				t.Errorf("content = %v, want %d %v (%s)", c, tc.tokens, tc.method, BasisParts)
			}
		})
	}
	// A configured rule wins over the family's.
	reg, err := r.With(&Options{Models: []Model{{Name: "my-vlm", Encoding: O200kBase,
		Framing: &Framing{PerMessage: 3, ReplyPriming: 3, Images: ImageRule{Low: 64, Max: 576}}}}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Counter("my-vlm")
	b := c.CountRequest(&Request{Messages: []Message{{Role: RoleUser, Parts: []Part{ImagePart(url, DetailLow), ImagePart(url, DetailHigh)}}}})
	if got := b.Stages[0].Count; got.Tokens != 64+576 || got.Method != Estimated {
		t.Errorf("configured rule: content = %v, want 640 estimated", got)
	}
}
