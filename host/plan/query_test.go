package plan

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// The llm_query/rlm_query cases of rlm_completion_test (12 to 18).
func TestQuery(t *testing.T) {
	fake := func(u Usage) *fakeModels {
		return &fakeModels{fn: func(context.Context, ModelCall) (ModelResult, error) {
			return ModelResult{Text: "FAKE_MODEL_OK", Usage: u}, nil
		}}
	}
	budget := func(edit func(*Budget)) *Budget {
		b := DefaultBudget()
		edit(&b)
		return &b
	}
	t.Run("bounded injected model", func(t *testing.T) {
		m := fake(tokens(2, 1))
		out, err := Query(t.Context(), QueryInput{Prompt: "hi", Provider: "openrouter"}, m)
		if err != nil || out.Response.Text != "FAKE_MODEL_OK" || out.Usage.ModelCalls != 1 || out.Usage.TotalTokens != 3 || m.n.Load() != 1 {
			t.Fatalf("Query = %+v, %v", out, err)
		}
	})
	t.Run("a whole chat request", func(t *testing.T) {
		var got ModelCall
		m := &fakeModels{fn: func(_ context.Context, c ModelCall) (ModelResult, error) {
			got = c
			return ModelResult{Text: "ok"}, nil // usage unknown: estimated from the request's text
		}}
		req := tokenizer.Request{Messages: []tokenizer.Message{
			{Role: tokenizer.RoleSystem, Content: "Be brief."},
			{Role: tokenizer.RoleUser, Content: "first"},
			{Role: tokenizer.RoleAssistant, Content: "one"},
			{Role: tokenizer.RoleUser, Content: "second"},
		}, MaxTokens: 1 << 20}
		out, err := Query(t.Context(), QueryInput{Prompt: "ignored", Request: req, MaxTokens: 64}, m)
		if err != nil {
			t.Fatal(err)
		}
		want := req.Clone()
		want.MaxTokens = 64
		if !reflect.DeepEqual(got.Request, want) || got.Prompt() != "second" {
			t.Fatalf("sent %+v, want %+v", got.Request, want)
		}
		if req.MaxTokens != 1<<20 {
			t.Error("Query changed the caller's request")
		}
		if n := len("Be brief.firstonesecond"); out.Usage.EstimatedTokens != (n+2)/3+64 {
			t.Errorf("estimated tokens = %d, want ceil(%d/3) + 64", out.Usage.EstimatedTokens, n)
		}
	})
	t.Run("token overage", func(t *testing.T) {
		_, err := Query(t.Context(), QueryInput{Prompt: "hi", Budget: budget(func(b *Budget) { b.MaxTotalTokens = 10 })}, fake(tokens(30, 30)))
		if kindOf(err) != KindTokenBudgetExceeded || !strings.Contains(err.Error(), "used=60") || !strings.Contains(err.Error(), "limit=10") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("cost overage", func(t *testing.T) {
		u := tokens(1, 1)
		u.Cost = 0.5
		_, err := Query(t.Context(), QueryInput{Prompt: "hi", Budget: budget(func(b *Budget) { b.MaxCostUSD = 0.1 })}, fake(u))
		if kindOf(err) != KindCostBudgetExceeded || !strings.Contains(err.Error(), "used=0.5") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("depth above the hard max", func(t *testing.T) {
		m := fake(tokens(1, 1))
		_, err := Query(t.Context(), QueryInput{Prompt: "hi", Depth: 1, Budget: budget(func(b *Budget) { b.MaxRecursionDepth = 0 })}, m)
		if kindOf(err) != KindCompletionFault || detailOf(err) != "recursion_depth_exceeded(1,0)" || m.n.Load() != 0 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("rlm_query at depth one", func(t *testing.T) {
		var got ModelCall
		m := &fakeModels{fn: func(_ context.Context, c ModelCall) (ModelResult, error) {
			got = c
			return ModelResult{Text: "FAKE_MODEL_OK"}, nil
		}}
		meta := handle.Metadata{Backend: "memory", Kind: "text", Bytes: 10, Items: 1, Version: 1}
		prompt := RLMQueryPrompt("what is it?", 1, meta)
		out, err := Query(t.Context(), QueryInput{Prompt: prompt, Depth: 1, Reason: "rlm_query"}, m)
		if err != nil || out.Response.Text != "FAKE_MODEL_OK" || got.Depth != 1 || !strings.Contains(got.Prompt(), "depth 1") || !strings.Contains(got.Prompt(), "kind=text") {
			t.Fatalf("Query = %+v, %v, call %+v", out, err, got)
		}
	})
	t.Run("midflight cancellation", func(t *testing.T) {
		started := make(chan struct{})
		m := &fakeModels{fn: slowModel(started, true)}
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-started; cancel() }()
		begin := time.Now()
		_, err := Query(ctx, QueryInput{Prompt: "slow", Budget: budget(func(b *Budget) { b.TimeLimit = 5 * time.Second })}, m)
		if kindOf(err) != KindCancelled || time.Since(begin) > 2*time.Second {
			t.Fatalf("err = %v after %v", err, time.Since(begin))
		}
	})
	t.Run("wall time", func(t *testing.T) {
		m := &fakeModels{fn: slowModel(make(chan struct{}), false)}
		_, err := Query(t.Context(), QueryInput{Prompt: "slow", Budget: budget(func(b *Budget) { b.TimeLimit = 50 * time.Millisecond })}, m)
		if kindOf(err) != KindTimeout || !errors.Is(err, ErrTimeLimit) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("model error", func(t *testing.T) {
		m := &fakeModels{fn: func(context.Context, ModelCall) (ModelResult, error) {
			return ModelResult{}, errors.New("provider: 401")
		}}
		_, err := Query(t.Context(), QueryInput{Prompt: "x", Provider: "openrouter"}, m)
		var e *Error
		if !errors.As(err, &e) || e.Scope != ScopeCompletion || e.Phase != PhaseModel || e.Kind != KindModelError {
			t.Fatalf("err = %v", err)
		}
	})
}
