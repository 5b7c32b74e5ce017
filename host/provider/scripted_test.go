package provider_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func TestScripted(t *testing.T) {
	fail := &provider.Error{Kind: provider.KindHTTPStatus, Status: 503, Retryable: true}
	s := &provider.Scripted{Steps: []provider.Step{
		{Response: provider.Response{Content: "plan", Usage: provider.TokenUsage(1, 1).WithCost(0)}},
		{Err: fail},
	}}
	ctx := context.Background()
	req := userReq("goal")
	if r, err := s.Complete(ctx, req); err != nil || r.Content != "plan" {
		t.Errorf("call 0 = %+v, %v", r, err)
	}
	req.Messages[0].Content = "mutated after the call" // the recording is a copy
	if _, err := s.Complete(ctx, userReq("model step")); err != fail {
		t.Errorf("call 1 error = %v, want the scripted error", err)
	}
	_, err := s.Complete(ctx, userReq("one too many"))
	if !errors.Is(err, provider.ErrScriptExhausted) {
		t.Errorf("call 2 error = %v, want ErrScriptExhausted", err)
	}
	var texts []string
	for _, r := range s.Requests() {
		texts = append(texts, r.Messages[0].Content)
	}
	if want := []string{"goal", "model step", "one too many"}; !reflect.DeepEqual(texts, want) || s.Calls() != 3 {
		t.Errorf("Requests = %q, want %q", texts, want)
	}
}

func TestScriptedFunc(t *testing.T) {
	s := &provider.Scripted{
		Steps: []provider.Step{{Response: provider.Response{Content: "first"}}},
		Func: func(call int, req tokenizer.Request) (provider.Response, error) {
			return provider.Response{Content: req.Messages[0].Content + "!"}, nil
		},
	}
	for i, want := range []string{"first", "b!", "c!"} {
		r, err := s.Complete(context.Background(), userReq(string(rune('a'+i))))
		if err != nil || r.Content != want {
			t.Errorf("call %d = %q, %v; want %q", i, r.Content, err, want)
		}
	}
}

func TestScriptedCancelDuringSlowCall(t *testing.T) {
	started := make(chan int, 1)
	s := &provider.Scripted{
		Steps:  []provider.Step{{Response: provider.Response{Content: "late"}}},
		Delay:  5 * time.Second,
		OnCall: func(call int, _ tokenizer.Request) { started <- call },
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	start := time.Now()
	_, err := s.Complete(ctx, userReq("slow"))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("Complete = %v, want canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %v", d)
	}
	if s.Calls() != 1 {
		t.Errorf("Calls = %d, want 1 (a canceled call is still recorded)", s.Calls())
	}
	// A per-step delay elapses normally.
	s = &provider.Scripted{Steps: []provider.Step{{Response: provider.Response{Content: "ok"}, Delay: 20 * time.Millisecond}}}
	if r, err := s.Complete(context.Background(), userReq("q")); err != nil || r.Content != "ok" {
		t.Errorf("Complete = %+v, %v", r, err)
	}
}

func TestScriptedStream(t *testing.T) {
	resp := provider.Response{Content: "hi", Reasoning: "r", FinishReason: "tool_calls", Model: "fake",
		ToolCalls: []tokenizer.ToolCall{{ID: "1", Type: "function", Function: tokenizer.FunctionCall{Name: "f", Arguments: "{}"}}}, Usage: provider.TokenUsage(2, 1)}
	s := provider.NewScripted(resp)
	var ds []provider.Delta
	got, err := s.Stream(context.Background(), userReq("q"), collect(&ds))
	if err != nil || !reflect.DeepEqual(withoutBody(got), resp) {
		t.Errorf("Stream = %+v, %v; want %+v", got, err, resp)
	}
	if w := `{"messages":[{"role":"user","content":"q"}],"stream":true,"stream_options":{"include_usage":true}}`; string(got.RequestBody) != w {
		t.Errorf("RequestBody = %s, want %s", got.RequestBody, w)
	}
	if g, w := deltaString(ds), `reasoning("r") text("hi") tool_call(0,"1","f","{}") finish(tool_calls) usage(prompt=2 completion=1 total=3 cost=?)`; g != w {
		t.Errorf("deltas = %s\nwant     %s", g, w)
	}

	// Explicit deltas, then a failure midway.
	broken := errors.New("connection reset")
	s = &provider.Scripted{Steps: []provider.Step{{
		Deltas: []provider.Delta{{Kind: provider.DeltaText, Text: "a"}, {Kind: provider.DeltaText, Text: "b"}},
		Err:    broken,
	}}}
	ds = nil
	got, err = s.Stream(context.Background(), userReq("q"), collect(&ds))
	if err != broken || got.Content != "ab" || len(ds) != 2 {
		t.Errorf("Stream = %+v, %v with %d deltas", got, err, len(ds))
	}
	// Complete of a Deltas step returns their assembly.
	s = &provider.Scripted{Steps: []provider.Step{{Deltas: []provider.Delta{{Kind: provider.DeltaText, Text: "a"}, {Kind: provider.DeltaText, Text: "b"}}}}}
	if got, _ := s.Complete(context.Background(), userReq("q")); got.Content != "ab" {
		t.Errorf("Complete of deltas = %q", got.Content)
	}
}
