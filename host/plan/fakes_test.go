package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
)

// scriptedPlanner answers with its replies in order (the last one again
// once they run out) and records every request.
type scriptedPlanner struct {
	mu       sync.Mutex
	replies  []PlannerReply
	requests []PlannerRequest
	fn       func(ctx context.Context, req PlannerRequest) (PlannerReply, error)
}

func planner(texts ...string) *scriptedPlanner {
	p := &scriptedPlanner{}
	for _, t := range texts {
		p.replies = append(p.replies, PlannerReply{Text: t, Usage: tokens(1, 1)})
	}
	return p
}

func (p *scriptedPlanner) Plan(ctx context.Context, req PlannerRequest) (PlannerReply, error) {
	p.mu.Lock()
	p.requests = append(p.requests, req)
	n := len(p.requests)
	fn := p.fn
	p.mu.Unlock()
	if fn != nil {
		return fn(ctx, req)
	}
	if len(p.replies) == 0 {
		return PlannerReply{}, errors.New("no reply scripted")
	}
	return p.replies[min(n, len(p.replies))-1], nil
}

func (p *scriptedPlanner) calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

func (p *scriptedPlanner) prompt(i int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[i].Prompt()
}

func tokens(prompt, completion int) Usage {
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
		PromptKnown: true, CompletionKnown: true, TotalKnown: true, Cost: 0, CostKnown: true}
}

// fakeModels answers model steps with fn (default: echo the prompt).
type fakeModels struct {
	n  atomic.Int64
	fn func(ctx context.Context, call ModelCall) (ModelResult, error)
}

func (m *fakeModels) Complete(ctx context.Context, call ModelCall) (ModelResult, error) {
	m.n.Add(1)
	if m.fn != nil {
		return m.fn(ctx, call)
	}
	return ModelResult{Text: "FAKE:" + call.Prompt(), Model: "fake", Usage: tokens(2, 1)}, nil
}

// fakeTools calls the named function.
type fakeTools struct {
	mu    sync.Mutex
	calls []string
	fns   map[string]func(ctx context.Context, args any) (any, error)
}

func (t *fakeTools) Call(ctx context.Context, name string, args any) (any, error) {
	t.mu.Lock()
	t.calls = append(t.calls, name)
	fn := t.fns[name]
	t.mu.Unlock()
	if fn == nil {
		return nil, fmt.Errorf("no tool %s", name)
	}
	return fn(ctx, args)
}

func (t *fakeTools) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

func countItems(_ context.Context, args any) (any, error) {
	switch v := args.(type) {
	case []handle.Match:
		return int64(len(v)), nil
	case []any:
		return int64(len(v)), nil
	}
	return nil, fmt.Errorf("count_items: not a list: %T", args)
}

// env is a completion test environment over a real handle.Registry.
type env struct {
	reg     *handle.Registry
	ctx     ContextRef
	planner *scriptedPlanner
	models  *fakeModels
	tools   *fakeTools
}

func newEnv(t testing.TB, text string, replies ...string) *env {
	t.Helper()
	n := 0
	reg := handle.New(&handle.Options{NewID: func() string { n++; return fmt.Sprintf("h%d", n) }})
	ref, meta, err := reg.RegisterText(text, handle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{reg: reg, ctx: ContextRef{Ref: ref, Metadata: meta}, planner: planner(replies...),
		models: &fakeModels{}, tools: &fakeTools{fns: map[string]func(context.Context, any) (any, error){"count_items": countItems}}}
}

func (e *env) deps() Deps {
	return Deps{Contexts: e.reg, Models: e.models, Tools: e.tools, Planner: e.planner, Terms: TermsForTest}
}

func (e *env) input(query string) Input {
	b := DefaultBudget()
	return Input{Query: query, Context: e.ctx, Budget: &b, Providers: []string{"openrouter"},
		Capabilities: MustCapabilities("rlm", "model(openrouter)", "context(search)", "context(peek)", "context(slice)"),
		Tools:        []ToolSchema{{Name: "count_items", Description: "counts a list", Schema: `{"type":"array"}`}}}
}

func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

func detailOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Detail != nil {
		return e.Detail.String()
	}
	return ""
}

func ops(tr Trajectory) string {
	var parts []string
	for _, e := range tr.Events {
		parts = append(parts, e.Op)
	}
	return strings.Join(parts, " ")
}
