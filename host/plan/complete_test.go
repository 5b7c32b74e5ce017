package plan

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
)

const needles = "alpha\nneedle one\nneedle two\nomega"

func TestCompleteDirect(t *testing.T) {
	// rlm_completion_test 1: direct_non_recursive_completion
	e := newEnv(t, "opaque context body", `plan([final(literal("direct-ok"))])`)
	out, err := Complete(t.Context(), e.input("say ok"), e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != "direct-ok" || out.Recursion.RecursiveCalls != 0 || out.Recursion.MaxDepth != 0 ||
		out.Usage.ModelCalls != 1 || e.planner.calls() != 1 {
		t.Fatalf("outcome = %+v (planner calls %d)", out, e.planner.calls())
	}
	if out.Usage.TotalTokens != 2 || !out.Usage.TokensKnown || out.PlannerAttempts != 1 {
		t.Fatalf("usage = %+v", out.Usage)
	}
	if strings.Contains(e.planner.prompt(0), "opaque context body") {
		t.Fatal("the planner prompt contains the context payload")
	}
	if !strings.Contains(e.planner.prompt(0), "Tools: none") {
		t.Fatal("the prompt shows a tool the capabilities do not grant")
	}
	if got := ops(out.Trajectory); got != "planner final" {
		t.Fatalf("trajectory ops = %q", got)
	}
}

func TestCompleteSearchToolFinal(t *testing.T) {
	// rlm_plan_test 3 through the completion loop, both syntaxes.
	for name, text := range map[string]string{
		"json": verbatimJSON,
		"term": "```prolog\nplan([context(input(context), search(\"needle\"), hits), tool(count_items, var(hits), count), final(var(count))]).\n```",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, needles, text)
			in := e.input("how many needles?")
			in.Capabilities = append(in.Capabilities, MustCapabilities("tool(count_items)")...)
			in.ContextLimits = handle.Limits{MaxResults: 4, MaxBytes: 512}
			out, err := Complete(t.Context(), in, e.deps())
			if err != nil {
				t.Fatal(err)
			}
			if out.Value != int64(2) {
				t.Fatalf("value = %#v, want 2", out.Value)
			}
			if !strings.Contains(e.planner.prompt(0), "count_items: counts a list\n    args schema: {\"type\":\"array\"}") {
				t.Fatal("the prompt lacks the granted tool's schema")
			}
			if got := ops(out.Trajectory); got != "planner context(search) tool(count_items) final" {
				t.Fatalf("ops = %q", got)
			}
			for i, ev := range out.Trajectory.Events {
				if ev.Seq != i+1 || ev.Status != "ok" {
					t.Fatalf("event %d = %+v", i, ev)
				}
			}
			last := out.Trajectory.Events[3].Counters
			if last.Steps != 3 || last.ContextOps != 1 || last.ToolCalls != 1 || last.ModelCalls != 1 {
				t.Fatalf("counters after final = %+v", last)
			}
			if _, ok := out.Vars["hits"].([]handle.Match); !ok {
				t.Fatalf("vars = %#v", out.Vars)
			}
		})
	}
}

func TestCompleteCapabilityDeniedBeforeSideEffect(t *testing.T) {
	// rlm_plan_test 6 and 7: no side effect happens before validation.
	e := newEnv(t, needles, `plan([context(input(context), search("needle"), h), tool(mark, var(h), m), final(var(m))])`)
	marked := false
	e.tools.fns["mark"] = func(context.Context, any) (any, error) { marked = true; return Atom("ok"), nil }
	in := e.input("mark")
	in.PlannerAttempts = 1
	_, err := Complete(t.Context(), in, e.deps())
	if kindOf(err) != KindCapabilityDenied || marked {
		t.Fatalf("err = %v, marked %v; want capability_denied and no side effect", err, marked)
	}
	in.Capabilities = append(in.Capabilities, MustCapabilities("tool(mark)")...) // granted but not registered
	_, err = Complete(t.Context(), in, e.deps())
	if kindOf(err) != KindUnknownTool {
		t.Fatalf("err = %v, want unknown_tool (preflight)", err)
	}
	if tr, _ := e.reg.Trace(e.ctx.Ref, 10); len(tr) != 0 || marked {
		t.Fatalf("the context was searched (%d events) before preflight failed", len(tr))
	}
}

func TestCompleteModelStepUsesModels(t *testing.T) {
	// §7.1 item 7: model steps go through the Models dependency.
	e := newEnv(t, needles, `plan([context(input(context), peek(head(5)), h), model(openrouter, var(h), [max_tokens(100000), temperature(0)], m), final(field(var(m), text))])`)
	var got ModelCall
	e.models.fn = func(_ context.Context, c ModelCall) (ModelResult, error) {
		got = c
		return ModelResult{Text: "FAKE_MODEL_OK", Usage: tokens(3, 2)}, nil
	}
	out, err := Complete(t.Context(), e.input("summarize"), e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != "FAKE_MODEL_OK" || e.models.n.Load() != 1 {
		t.Fatalf("value %#v, model calls %d", out.Value, e.models.n.Load())
	}
	// The cap is the remaining token budget (8192 - 2 used by the planner).
	if got.Prompt() != "alpha" || got.Request.MaxTokens != 8190 || got.Options["max_tokens"] != int64(8190) || got.Reason != "direct_plan_model" {
		t.Fatalf("model call = %+v", got)
	}
	if out.Usage.ModelCalls != 2 || out.Usage.TotalTokens != 7 {
		t.Fatalf("usage = %+v", out.Usage)
	}
}

func TestCompleteNestedRLM(t *testing.T) {
	e := newEnv(t, needles, `plan([rlm(plan([context(input(context), search("needle"), h), final(var(h))]), child), final(var(child))])`)
	out, err := Complete(t.Context(), e.input("nested"), e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := out.Value.([]handle.Match); !ok || len(m) != 2 {
		t.Fatalf("value = %#v", out.Value)
	}
	if out.Recursion.RecursiveCalls != 1 || out.Recursion.MaxDepth != 1 || out.Used.Depth != 1 {
		t.Fatalf("recursion = %+v, used %+v", out.Recursion, out.Used)
	}
	if got := ops(out.Trajectory); got != "planner context(search) final rlm final" {
		t.Fatalf("ops = %q", got)
	}
	if out.Trajectory.Events[1].Depth != 1 || out.Trajectory.Events[3].Depth != 0 {
		t.Fatalf("depths = %+v", out.Trajectory.Events)
	}
}

func TestCompleteChildCompletion(t *testing.T) {
	// rlm(query(...)) makes a nested planner call with the child
	// capabilities at depth 1.
	e := newEnv(t, needles)
	e.planner.fn = func(_ context.Context, req PlannerRequest) (PlannerReply, error) {
		if req.Depth == 0 {
			return PlannerReply{Text: `plan([rlm(query("find the needles"), sub), final(var(sub))])`, Usage: tokens(1, 1)}, nil
		}
		return PlannerReply{Text: `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"h"},{"op":"final","value":{"ref":"input","name":"query"}}]}`, Usage: tokens(1, 1)}, nil
	}
	in := e.input("root goal")
	in.ChildCapabilities = MustCapabilities("context(search)")
	out, err := Complete(t.Context(), in, e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != "find the needles" || out.ChildCompletions != 1 || out.Usage.ModelCalls != 2 || out.Used.Depth != 1 {
		t.Fatalf("outcome = %+v", out)
	}
	child := e.planner.prompt(1)
	for _, want := range []string{"child planner at recursion depth 1", "Goal: find the needles", "Capabilities: [context(search)]"} {
		if !strings.Contains(child, want) {
			t.Fatalf("child prompt lacks %q:\n%s", want, child)
		}
	}
	if got := ops(out.Trajectory); got != "planner planner context(search) final rlm final" {
		t.Fatalf("ops = %q", got)
	}

	// A child that widens its authority (tool use) is rejected at depth 1.
	e.planner.fn = func(_ context.Context, req PlannerRequest) (PlannerReply, error) {
		if req.Depth == 0 {
			return PlannerReply{Text: `plan([rlm(query("count"), sub), final(var(sub))])`, Usage: tokens(1, 1)}, nil
		}
		return PlannerReply{Text: `plan([tool(count_items, literal([]), n), final(var(n))])`, Usage: tokens(1, 1)}, nil
	}
	in.PlannerAttempts = 1
	in.Capabilities = append(in.Capabilities, MustCapabilities("tool(count_items)")...)
	_, err = Complete(t.Context(), in, e.deps())
	if kindOf(err) != KindCapabilityDenied || e.tools.count() != 0 {
		t.Fatalf("err = %v (tool calls %d), want capability_denied at the child", err, e.tools.count())
	}
}

func TestCompleteChildCycle(t *testing.T) {
	// A child planner answering with the root plan is a cycle.
	root := `plan([rlm(query("again"), sub), final(var(sub))])`
	e := newEnv(t, needles, root)
	in := e.input("loop")
	b := DefaultBudget()
	b.MaxRecursionDepth = 3
	in.Budget = &b
	in.PlannerAttempts = 1
	_, err := Complete(t.Context(), in, e.deps())
	if kindOf(err) != KindRecursivePlanRejected || !strings.HasPrefix(detailOf(err), "recursive_cycle") {
		t.Fatalf("err = %v, want recursive_plan_rejected recursive_cycle", err)
	}
}

func TestCompleteRecursiveRejections(t *testing.T) {
	for _, tc := range []struct {
		name, plan string
		depth      int
		detail     string
	}{
		{"depth two", `plan([rlm(plan([rlm(plan([final(literal(x))]), c), final(var(c))]), r), final(var(r))])`, 1, "recursion_depth_exceeded(2,1)"},
		{"duplicate", `plan([rlm(plan([final(literal("same-child"))]), a), rlm(plan([final(literal("same-child"))]), b), final(var(b))])`, 1, "duplicate_recursive_call"},
		{"anonymous dict no false cycle", `plan([rlm(plan([rlm(plan([tool(secret_tool, literal(json([secret(true)])), s), final(var(s))]), g), final(var(g))]), r), final(var(r))])`, 2, "child_capability_denied(tool(secret_tool))"},
		{"child reuses parent tool", `plan([rlm(plan([tool(secret_tool, literal(1), s), final(var(s))]), r), final(var(r))])`, 1, "child_capability_denied(tool(secret_tool))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, needles, tc.plan)
			in := e.input("q")
			b := DefaultBudget()
			b.MaxRecursionDepth = tc.depth
			in.Budget = &b
			in.PlannerAttempts = 1
			in.Capabilities = MustCapabilities("rlm", "model(openrouter)", "tool(secret_tool)")
			in.ChildCapabilities = MustCapabilities("rlm", "model(openrouter)")
			_, err := Complete(t.Context(), in, e.deps())
			if kindOf(err) != KindRecursivePlanRejected || detailOf(err) != tc.detail {
				t.Fatalf("err = %v, want recursive_plan_rejected %s", err, tc.detail)
			}
		})
	}
}

func TestCompleteHandlerTerm(t *testing.T) {
	// A trusted planner (a Prolog planner_handler) hands over a built term.
	term, err := TermsForTest.ReadTerm(`plan([context(input(context), search("needle"), found), final(var(found))])`, ReadLimits{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := FromTerm(term)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, needles)
	e.planner.replies = []PlannerReply{{Plan: p, Usage: tokens(1, 1)}}
	out, err := Complete(t.Context(), e.input("q"), e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := out.Value.([]handle.Match); !ok || len(m) != 2 {
		t.Fatalf("value = %#v", out.Value)
	}
}

func TestCompleteChildWideningDenied(t *testing.T) {
	e := newEnv(t, needles, `plan([final(literal(1))])`)
	in := e.input("q")
	in.ChildCapabilities = MustCapabilities("rlm", "tool(secret_tool)")
	_, err := Complete(t.Context(), in, e.deps())
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindCompletionFault || !strings.Contains(pe.Detail.String(), "widening_denied") ||
		!strings.Contains(pe.Detail.String(), "unauthorized([tool(secret_tool)])") || e.planner.calls() != 0 {
		t.Fatalf("err = %v (planner calls %d)", err, e.planner.calls())
	}
}

func TestCompletePlannerRetryFeedback(t *testing.T) {
	e := newEnv(t, needles, `Here you go: {"steps":[{"op":"final","value":}]}`, `plan([final(var(nope))])`, `plan([final(literal(fixed))])`)
	in := e.input("q")
	in.PlannerAttempts = 3
	b := DefaultBudget()
	b.MaxModelCalls = 3
	in.Budget = &b
	out, err := Complete(t.Context(), in, e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != Atom("fixed") || out.PlannerAttempts != 3 || e.planner.calls() != 3 {
		t.Fatalf("outcome %+v, planner calls %d", out, e.planner.calls())
	}
	if strings.Contains(e.planner.prompt(0), "rejected") {
		t.Fatal("the first prompt carries feedback")
	}
	if p := e.planner.prompt(1); !strings.Contains(p, "Your previous answer was rejected: json parse error (line 1, column") || !strings.Contains(p, "invalid JSON") {
		t.Fatalf("second prompt lacks the parse error:\n%s", p[strings.LastIndex(p, "\n\n"):])
	}
	if p := e.planner.prompt(2); !strings.Contains(p, "unbound_variable(nope)") {
		t.Fatalf("third prompt lacks the validation error:\n%s", p[strings.LastIndex(p, "\n\n"):])
	}
	if got := ops(out.Trajectory); got != "planner planner planner final" {
		t.Fatalf("ops = %q", got)
	}
}

func TestCompletePlannerFailures(t *testing.T) {
	t.Run("parse failed", func(t *testing.T) {
		e := newEnv(t, needles, "not a typed plan")
		_, err := Complete(t.Context(), e.input("q"), e.deps())
		var pe *ParseError
		if kindOf(err) != KindPlanParseFailed || !errors.As(err, &pe) || e.planner.calls() != 2 {
			t.Fatalf("err = %v, calls %d", err, e.planner.calls())
		}
		if v, _ := err.(*Error).Get("attempts"); v != int64(2) {
			t.Fatalf("attempts = %v", v)
		}
		// The reason is said once, with the kinds and the position.
		if msg := err.Error(); strings.Count(msg, pe.Msg) != 1 || !strings.Contains(msg, "invalid_plan") || !strings.Contains(msg, "syntax=") {
			t.Fatalf("message %q", msg)
		}
	})
	t.Run("retry cannot exceed model call budget", func(t *testing.T) {
		// rlm_completion_test 10
		e := newEnv(t, needles, "not a typed plan")
		in := e.input("q")
		in.PlannerAttempts = 3
		b := DefaultBudget()
		b.MaxModelCalls = 1
		in.Budget = &b
		_, err := Complete(t.Context(), in, e.deps())
		if kindOf(err) != KindModelCallBudgetExhausted || e.planner.calls() != 1 {
			t.Fatalf("err = %v, calls %d", err, e.planner.calls())
		}
	})
	t.Run("token budget exhausted before planner", func(t *testing.T) {
		e := newEnv(t, needles)
		e.planner.replies = []PlannerReply{{Text: "nope", Usage: tokens(5, 5)}}
		in := e.input("q")
		b := DefaultBudget()
		b.MaxTotalTokens = 10
		in.Budget = &b
		_, err := Complete(t.Context(), in, e.deps())
		if kindOf(err) != KindTokenBudgetExhausted || e.planner.calls() != 1 {
			t.Fatalf("err = %v, calls %d", err, e.planner.calls())
		}
	})
	t.Run("planner error", func(t *testing.T) {
		e := newEnv(t, needles)
		e.planner.fn = func(context.Context, PlannerRequest) (PlannerReply, error) {
			return PlannerReply{}, errors.New("provider: 503")
		}
		_, err := Complete(t.Context(), e.input("q"), e.deps())
		if kindOf(err) != KindPlannerError || e.planner.calls() != 1 {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestCompleteBudgets(t *testing.T) {
	type setup struct {
		plan  string
		edit  func(*Budget)
		model func(context.Context, ModelCall) (ModelResult, error)
	}
	search := `context(input(context), search("needle"), h)`
	for _, tc := range []struct {
		name string
		setup
		kind  Kind
		field string // "key=value" that the error must show
	}{
		{"steps", setup{plan: `plan([checkpoint(a), checkpoint(b), final(literal(1))])`, edit: func(b *Budget) { b.MaxIterations = 2 }}, KindBudgetExceeded, "budget=steps"},
		{"context ops", setup{plan: `plan([` + search + `, context(input(context), search("x"), i), final(var(i))])`, edit: func(b *Budget) { b.MaxContextOps = 1 }}, KindBudgetExceeded, "budget=context_ops"},
		{"tool calls", setup{plan: `plan([tool(count_items, literal([]), n), final(var(n))])`, edit: func(b *Budget) { b.MaxToolCalls = 0 }}, KindBudgetExceeded, "budget=tool_calls"},
		{"model calls", setup{plan: `plan([model(openrouter, literal("a"), [], a), model(openrouter, literal("b"), [], b), final(var(b))])`, edit: func(b *Budget) { b.MaxModelCalls = 2 }}, KindBudgetExceeded, "budget=model_calls"},
		{"output bytes", setup{plan: `plan([` + search + `, final(var(h))])`, edit: func(b *Budget) { b.MaxOutputBytes = 20 }}, KindBudgetExhausted, "budget=output_bytes"},
		{"tokens", setup{plan: `plan([model(openrouter, literal("a"), [], a), final(var(a))])`, edit: func(b *Budget) { b.MaxTotalTokens = 10 },
			model: func(context.Context, ModelCall) (ModelResult, error) { return ModelResult{Usage: tokens(30, 30)}, nil }}, KindTokenBudgetExceeded, "used=62"},
		{"unknown tokens", setup{plan: `plan([model(openrouter, literal("a"), [max_tokens(50)], a), final(var(a))])`, edit: func(b *Budget) { b.MaxTotalTokens = 40 },
			model: func(context.Context, ModelCall) (ModelResult, error) { return ModelResult{Text: "?"}, nil }}, KindTokenBudgetExceeded, "estimated=true"},
		{"cost", setup{plan: `plan([model(openrouter, literal("a"), [], a), final(var(a))])`, edit: func(b *Budget) { b.MaxCostUSD = 0.1 },
			model: func(context.Context, ModelCall) (ModelResult, error) {
				u := tokens(1, 1)
				u.Cost = 0.5
				return ModelResult{Usage: u}, nil
			}}, KindCostBudgetExceeded, "used=0.5"},
		{"unknown cost", setup{plan: `plan([model(openrouter, literal("a"), [], a), model(openrouter, literal("b"), [], b), final(var(b))])`,
			edit: func(b *Budget) { b.UnknownCallCostUSD = 0.2; b.MaxCostUSD = 0.3 },
			model: func(context.Context, ModelCall) (ModelResult, error) {
				u := tokens(1, 1)
				u.CostKnown = false
				return ModelResult{Usage: u}, nil
			}}, KindCostBudgetExceeded, "limit=0.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, needles, tc.plan)
			e.models.fn = tc.model
			in := e.input("q")
			in.PlannerAttempts = 1
			in.Capabilities = append(in.Capabilities, MustCapabilities("checkpoint", "tool(count_items)")...)
			b := DefaultBudget()
			tc.edit(&b)
			in.Budget = &b
			out, err := Complete(t.Context(), in, e.deps())
			if kindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want %s with %s", err, tc.kind, tc.field)
			}
			if out == nil || out.Usage.ModelCalls < 1 {
				t.Fatalf("outcome on error = %+v, want usage", out)
			}
		})
	}
}

func TestOutputBytesOfNestedResults(t *testing.T) {
	// rlm_plan_test 13 (§7.1 item 9): a 40-char tool result passes through
	// a child's final and the parent's final. Within a plan a value is
	// charged once, when produced (upstream charged every binding); the
	// child's result is produced again into the parent, as upstream
	// charges it, so a nested plan shares the output budget (issue 41):
	// 84 bytes, where upstream's 50-byte test fails.
	val := strings.Repeat("x", 40) // 42 canonical bytes
	plan := fmt.Sprintf(`plan([rlm(plan([tool(echo, literal(%q), s), final(var(s))]), c), final(var(c))])`, val)
	for _, tc := range []struct {
		limit int
		ok    bool
	}{{50, false}, {83, false}, {84, true}} {
		e := newEnv(t, needles, plan)
		e.tools.fns["echo"] = func(_ context.Context, a any) (any, error) { return a, nil }
		in := e.input("q")
		in.Tools = append(in.Tools, ToolSchema{Name: "echo"})
		in.Capabilities = append(in.Capabilities, MustCapabilities("tool(echo)")...)
		in.ChildCapabilities = in.Capabilities
		b := DefaultBudget()
		b.MaxOutputBytes = tc.limit
		in.Budget = &b
		out, err := Complete(t.Context(), in, e.deps())
		// The tool result (42 bytes) is produced once in the child and
		// once as the child's result in the parent; args and finals of
		// vars produce nothing new.
		if tc.ok != (err == nil) {
			t.Fatalf("limit %d: err = %v", tc.limit, err)
		}
		if tc.ok && out.Used.OutputBytes != 84 {
			t.Fatalf("output bytes used = %d, want 84 (the tool result in the child, and again at the parent)", out.Used.OutputBytes)
		}
	}
}

func TestCompleteParallel(t *testing.T) {
	// rlm_plan_test 14, and the branches really run concurrently: each waits
	// until both have started.
	e := newEnv(t, needles, `plan([parallel([plan([tool(meet, literal(alpha), a), final(var(a))]), plan([tool(meet, literal(beta), b), final(var(b))])], p), final(var(p))])`)
	var started sync.WaitGroup
	started.Add(2)
	e.tools.fns["meet"] = func(ctx context.Context, a any) (any, error) {
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
			return a, nil
		case <-time.After(5 * time.Second):
			return nil, errors.New("branches did not run concurrently")
		}
	}
	in := e.input("q")
	in.Tools = append(in.Tools, ToolSchema{Name: "meet"})
	in.Capabilities = append(in.Capabilities, MustCapabilities("parallel", "tool(meet)")...)
	out, err := Complete(t.Context(), in, e.deps())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := out.Value.([]any)
	if len(got) != 2 || got[0] != Atom("alpha") || got[1] != Atom("beta") {
		t.Fatalf("value = %#v, want [alpha beta]", out.Value)
	}
	if got := ops(out.Trajectory); got != "planner tool(meet) final tool(meet) final parallel final" {
		t.Fatalf("ops = %q (want branch order)", got)
	}
}

func TestParallelBoundedAndFailFast(t *testing.T) {
	e := newEnv(t, needles, `plan([parallel([plan([tool(work, literal(1), a), final(var(a))]), plan([tool(work, literal(2), b), final(var(b))]), plan([tool(work, literal(3), c), final(var(c))]), plan([tool(work, literal(4), d), final(var(d))])], p), final(var(p))])`)
	var inflight, peak atomic.Int64
	e.tools.fns["work"] = func(ctx context.Context, a any) (any, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		if a == int64(3) {
			return nil, errors.New("boom")
		}
		return a, nil
	}
	in := e.input("q")
	in.Tools = append(in.Tools, ToolSchema{Name: "work"})
	in.Capabilities = append(in.Capabilities, MustCapabilities("parallel", "tool(work)")...)
	b := DefaultBudget()
	b.MaxConcurrentSubcalls = 2
	in.Budget = &b
	_, err := Complete(t.Context(), in, e.deps())
	if kindOf(err) != KindToolError || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the failing branch's tool_error", err)
	}
	if peak.Load() > 2 {
		t.Fatalf("%d branches ran at once, limit 2", peak.Load())
	}
}

func TestCompleteRetryAndCheckpoint(t *testing.T) {
	// rlm_plan_test 15 and 16.
	e := newEnv(t, needles, `plan([checkpoint(before_retry), retry(2, plan([tool(flaky, literal(x), r), final(var(r))]), ok), checkpoint(before_final), final(var(ok))])`)
	var n atomic.Int64
	e.tools.fns["flaky"] = func(context.Context, any) (any, error) {
		if n.Add(1) == 1 {
			return nil, errors.New("first call fails")
		}
		return Atom("ok"), nil
	}
	in := e.input("q")
	in.Tools = append(in.Tools, ToolSchema{Name: "flaky"})
	in.Capabilities = append(in.Capabilities, MustCapabilities("retry", "checkpoint", "tool(flaky)")...)
	out, err := Complete(t.Context(), in, e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != Atom("ok") || out.Used.ToolCalls != 2 || out.Remaining.ToolCalls != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	if strings.Join(out.Checkpoints, ",") != "before_retry,before_final" {
		t.Fatalf("checkpoints = %v", out.Checkpoints)
	}
	if got := ops(out.Trajectory); got != "planner checkpoint tool(flaky) tool(flaky) final retry checkpoint final" {
		t.Fatalf("ops = %q", got)
	}
}

// slowModel blocks until ctx is done (or, with ignoreCtx, for 3s).
func slowModel(started chan<- struct{}, ignoreCtx bool) func(context.Context, ModelCall) (ModelResult, error) {
	return func(ctx context.Context, _ ModelCall) (ModelResult, error) {
		close(started)
		if ignoreCtx {
			time.Sleep(3 * time.Second)
			return ModelResult{Text: "late"}, nil
		}
		<-ctx.Done()
		return ModelResult{}, fmt.Errorf("provider: %w", ctx.Err())
	}
}

func TestCompleteCancellation(t *testing.T) {
	modelPlan := `plan([model(openrouter, literal("slow"), [], m), final(var(m))])`
	t.Run("before the planner", func(t *testing.T) {
		// rlm_completion_test 11
		e := newEnv(t, needles, modelPlan)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		exited := 0
		in := e.input("q")
		in.OnExit = func(*Outcome, error) { exited++ }
		_, err := Complete(ctx, in, e.deps())
		if kindOf(err) != KindCancelled || !errors.Is(err, context.Canceled) || e.planner.calls() != 0 || exited != 1 {
			t.Fatalf("err = %v, planner calls %d, exits %d", err, e.planner.calls(), exited)
		}
	})
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("during a slow model call (model ignores ctx: %v)", ignore), func(t *testing.T) {
			// rlm_completion_test 12
			e := newEnv(t, needles, modelPlan)
			started := make(chan struct{})
			e.models.fn = slowModel(started, ignore)
			ctx, cancel := context.WithCancel(t.Context())
			go func() { <-started; cancel() }()
			exited := make(chan error, 1)
			in := e.input("q")
			in.OnExit = func(_ *Outcome, err error) { exited <- err }
			begin := time.Now()
			out, err := Complete(ctx, in, e.deps())
			if kindOf(err) != KindCancelled || !errors.Is(err, context.Canceled) || time.Since(begin) > 2*time.Second {
				t.Fatalf("err = %v after %v", err, time.Since(begin))
			}
			if got := <-exited; got != err {
				t.Fatalf("OnExit saw %v", got)
			}
			if len(out.Trajectory.Events) != 2 || out.Trajectory.Events[1].Error != KindCancelled {
				t.Fatalf("trajectory = %+v", out.Trajectory.Events)
			}
		})
	}
	t.Run("time limit", func(t *testing.T) {
		// rlm_completion_test 13
		e := newEnv(t, needles, modelPlan)
		started := make(chan struct{})
		e.models.fn = slowModel(started, false)
		in := e.input("q")
		b := DefaultBudget()
		b.TimeLimit = 50 * time.Millisecond
		in.Budget = &b
		begin := time.Now()
		_, err := Complete(t.Context(), in, e.deps())
		if kindOf(err) != KindTimeout || !errors.Is(err, ErrTimeLimit) || !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 2*time.Second {
			t.Fatalf("err = %v after %v", err, time.Since(begin))
		}
	})
	t.Run("control wins over a retried tool", func(t *testing.T) {
		e := newEnv(t, needles, `plan([retry(3, plan([tool(stuck, literal(1), r), final(var(r))]), x), final(var(x))])`)
		var calls atomic.Int64
		ctx, cancel := context.WithCancel(t.Context())
		e.tools.fns["stuck"] = func(tctx context.Context, _ any) (any, error) {
			calls.Add(1)
			cancel()
			<-tctx.Done()
			return nil, errors.New("tool gave up") // an ordinary-looking error
		}
		in := e.input("q")
		in.Tools = append(in.Tools, ToolSchema{Name: "stuck"})
		in.Capabilities = append(in.Capabilities, MustCapabilities("retry", "tool(stuck)")...)
		_, err := Complete(ctx, in, e.deps())
		if kindOf(err) != KindCancelled || calls.Load() != 1 {
			t.Fatalf("err = %v after %d calls, want cancelled after 1", err, calls.Load())
		}
	})
}

func TestTrajectoryBounded(t *testing.T) {
	e := newEnv(t, needles, `plan([checkpoint(a), checkpoint(b), checkpoint(c), final(literal(1))])`)
	in := e.input("q")
	in.Capabilities = append(in.Capabilities, MustCapabilities("checkpoint")...)
	in.MaxTrajectory = 2
	out, err := Complete(t.Context(), in, e.deps())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Trajectory.Events) != 2 || out.Trajectory.Dropped != 3 {
		t.Fatalf("trajectory = %d events, %d dropped", len(out.Trajectory.Events), out.Trajectory.Dropped)
	}
}

func TestCompleteNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 5 {
		e := newEnv(t, needles, `plan([parallel([plan([final(literal(a))]), plan([context(input(context), search("needle"), h), final(var(h))])], p), final(var(p))])`)
		in := e.input("q")
		in.Capabilities = append(in.Capabilities, MustCapabilities("parallel")...)
		if _, err := Complete(t.Context(), in, e.deps()); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after", before, n)
	}
}

func TestCompleteStepsExhaustedAtRunTime(t *testing.T) {
	// The static estimate of rlm(query(...)) cannot know the child's plan:
	// the child fits when it is planned, and the root's final then finds no
	// step left.
	e := newEnv(t, needles)
	e.planner.fn = func(_ context.Context, req PlannerRequest) (PlannerReply, error) {
		if req.Depth == 0 {
			return PlannerReply{Text: `plan([rlm(query("sub"), s), final(var(s))])`, Usage: tokens(1, 1)}, nil
		}
		return PlannerReply{Text: `plan([checkpoint(a), checkpoint(b), final(literal(1))])`, Usage: tokens(1, 1)}, nil
	}
	in := e.input("q")
	in.PlannerAttempts = 1
	in.Capabilities = append(in.Capabilities, MustCapabilities("checkpoint")...)
	b := DefaultBudget()
	b.MaxIterations = 4
	in.Budget = &b
	out, err := Complete(t.Context(), in, e.deps())
	if kindOf(err) != KindBudgetExhausted || !strings.Contains(err.Error(), "budget=steps") || out.Used.Steps != 4 {
		t.Fatalf("err = %v, used %+v", err, out.Used)
	}
}

func TestCancelCause(t *testing.T) {
	e := newEnv(t, needles, `plan([final(literal(1))])`)
	token := errors.New("rlm_cancel(cancel_1)")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(token)
	_, err := Complete(ctx, e.input("q"), e.deps())
	if kindOf(err) != KindCancelled || !errors.Is(err, token) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestCompleteTrustedPlanWithoutContext(t *testing.T) {
	// plan_run/5 with no context input: a trusted plan runs without one,
	// and a plan that reads the context is refused before any step runs.
	for _, tc := range []struct {
		name, plan string
		detail     string // "" for success
	}{
		{"no context step", `plan([tool(count_items, literal([1, 2]), n), final(var(n))])`, ""},
		{"query only", `plan([final(input(query))])`, ""},
		{"context step refused", `plan([tool(count_items, literal([1]), n), context(input(context), search("a"), h), final(var(h))])`,
			"missing_input(context)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, needles)
			in := e.input("q")
			in.Context = ContextRef{}
			in.Capabilities = MustCapabilities("tool(count_items)", "context(search)")
			in.Tools = []ToolSchema{{Name: "count_items"}}
			in.Plan = mustTerm(tc.plan)
			out, err := Complete(t.Context(), in, e.deps())
			if tc.detail == "" {
				if err != nil || out.Value == nil {
					t.Fatalf("Complete = %v, %v", out.Value, err)
				}
				return
			}
			if detailOf(err) != tc.detail || e.tools.count() != 0 {
				t.Fatalf("Complete error = %v (tool calls %d), want %s before any step", err, e.tools.count(), tc.detail)
			}
		})
	}
	// A planner still needs a context: it is what the planner is told about.
	e := newEnv(t, needles, `plan([final(literal(1))])`)
	in := e.input("q")
	in.Context = ContextRef{}
	if _, err := Complete(t.Context(), in, e.deps()); kindOf(err) != KindCompletionFault {
		t.Fatalf("Complete without a context or a plan = %v, want completion_fault", err)
	}
}

// invalidPlanner answers with replies that are not plans, then a plan.
type invalidPlanner struct {
	replies []PlannerReply
	calls   int
	prompts []string
}

func (p *invalidPlanner) Plan(_ context.Context, req PlannerRequest) (PlannerReply, error) {
	p.prompts = append(p.prompts, req.Prompt())
	r := p.replies[min(p.calls, len(p.replies)-1)]
	p.calls++
	return r, nil
}

func TestCompletePlannerReplyInvalid(t *testing.T) {
	// A reply whose Invalid is set (a handler's plan term that did not
	// convert) is fed back and retried like text that does not parse, and
	// the last one is the completion's error.
	rejected := rejected(D("non_ground_recursive_plan"), "the plan contains a variable")
	for _, tc := range []struct {
		name     string
		attempts int
		replies  []PlannerReply
		kind     Kind
	}{
		{"retried, then a plan", 2, []PlannerReply{{Invalid: rejected}, {Plan: mustTerm(`plan([final(literal(ok))])`)}}, ""},
		{"the last invalid reply is the error", 2, []PlannerReply{{Invalid: rejected}}, KindRecursivePlanRejected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, needles)
			p := &invalidPlanner{replies: tc.replies}
			deps := e.deps()
			deps.Planner = p
			in := e.input("q")
			in.PlannerAttempts = tc.attempts
			out, err := Complete(t.Context(), in, deps)
			if kindOf(err) != tc.kind || p.calls != tc.attempts {
				t.Fatalf("Complete = %v (planner calls %d), want kind %q after %d calls", err, p.calls, tc.kind, tc.attempts)
			}
			if !strings.Contains(p.prompts[1], "non_ground_recursive_plan") {
				t.Fatalf("second prompt does not feed the failure back:\n%s", p.prompts[1])
			}
			if tc.kind == "" && out.PlannerAttempts != 2 {
				t.Fatalf("planner attempts = %d, want 2", out.PlannerAttempts)
			}
		})
	}
}
