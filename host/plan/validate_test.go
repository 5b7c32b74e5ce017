package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	allCaps := MustCapabilities("rlm", "parallel", "retry", "checkpoint", "context(search)", "context(map)",
		"tool(count_items)", "tool(mark)", "tool(unregistered)", "model(openrouter)", "model(live)")
	base := Policy{Capabilities: allCaps, ChildCapabilities: allCaps, Budget: DefaultBudget(),
		Providers: []string{"openrouter"}, Tools: []string{"count_items", "mark"}}
	base.Budget.MaxRecursionDepth = 3
	for _, tc := range []struct {
		name  string
		plan  string
		edit  func(*Policy)
		scope Scope
		kind  Kind
		want  string // detail prefix or a field value
	}{
		// rlm_plan_test
		{name: "duplicate binding", plan: `plan([tool(count_items, literal([]), x), tool(count_items, literal([]), x), final(var(x))])`,
			scope: ScopePlan, kind: KindInvalidPlan, want: "duplicate_binding(x)"},
		{name: "unbound variable", plan: `plan([final(var(missing))])`, scope: ScopePlan, kind: KindInvalidPlan, want: "unbound_variable(missing)"},
		{name: "final not last", plan: `plan([final(literal(done)), checkpoint(after)])`, scope: ScopePlan, kind: KindInvalidPlan, want: "final_must_be_unique_and_last"},
		{name: "two finals", plan: `plan([final(literal(1)), final(literal(2))])`, scope: ScopePlan, kind: KindInvalidPlan, want: "final_must_be_unique_and_last"},
		{name: "empty plan", plan: `plan([])`, scope: ScopePlan, kind: KindInvalidPlan, want: "empty_plan"},
		{name: "nested final missing", plan: `plan([rlm(plan([checkpoint(x)]), r), final(var(r))])`, scope: ScopePlan, kind: KindInvalidPlan, want: "final_must_be_unique_and_last"},
		{name: "map transform allow-list", plan: `plan([context(input(context), map(call(shell)), r), final(var(r))])`,
			scope: ScopePlan, kind: KindInvalidPlan, want: "invalid_context_action"},
		{name: "unknown input", plan: `plan([final(input(env))])`, scope: ScopePlan, kind: KindInvalidPlan, want: "missing_input(env)"},
		{name: "child bindings do not leak", plan: `plan([rlm(plan([tool(count_items, literal([]), inner), final(var(inner))]), r), final(var(inner))])`,
			scope: ScopePlan, kind: KindInvalidPlan, want: "unbound_variable(inner)"},
		{name: "child cannot rebind parent name", plan: `plan([tool(count_items, literal([]), x), rlm(plan([tool(count_items, literal([]), x), final(var(x))]), r), final(var(r))])`,
			scope: ScopePlan, kind: KindInvalidPlan, want: "duplicate_binding(x)"},
		{name: "capability denied before tool", plan: `plan([tool(mark, literal(1), m), final(var(m))])`,
			edit: func(p *Policy) { p.Capabilities = nil }, scope: ScopePlan, kind: KindCapabilityDenied, want: "tool(mark)"},
		{name: "capability inside parallel", plan: `plan([parallel([plan([tool(mark, literal(1), m), final(var(m))])], p), final(var(p))])`,
			edit: func(p *Policy) { p.Capabilities = MustCapabilities("parallel") }, scope: ScopePlan, kind: KindCapabilityDenied, want: "tool(mark)"},
		{name: "runaway retry static budget", plan: `plan([retry(5, plan([tool(count_items, literal([]), a), final(var(a))]), r), final(var(r))])`,
			edit: func(p *Policy) { p.Budget.MaxIterations = 5 }, scope: ScopePlan, kind: KindBudgetExceeded, want: "estimated=12"},
		{name: "tool call estimate", plan: `plan([parallel([plan([tool(count_items, literal([]), a), final(var(a))]), plan([tool(count_items, literal([]), b), final(var(b))])], p), final(var(p))])`,
			edit: func(p *Policy) { p.Budget.MaxToolCalls = 1 }, scope: ScopePlan, kind: KindBudgetExceeded, want: "budget=tool_calls"},
		{name: "context op estimate", plan: `plan([context(input(context), search("a"), a), context(input(context), search("b"), b), final(var(b))])`,
			edit: func(p *Policy) { p.Budget.MaxContextOps = 1 }, scope: ScopePlan, kind: KindBudgetExceeded, want: "budget=context_ops"},
		{name: "model call estimate counts planner calls", plan: `plan([model(openrouter, literal("a"), [], a), final(var(a))])`,
			edit: func(p *Policy) { p.Budget.MaxModelCalls = 1; p.Used.ModelCalls = 1 }, scope: ScopePlan, kind: KindBudgetExceeded, want: "budget=model_calls"},
		{name: "preflight unknown tool", plan: `plan([context(input(context), search("a"), a), tool(unregistered, var(a), b), final(var(b))])`,
			scope: ScopePlan, kind: KindUnknownTool, want: "value=unregistered"},
		{name: "preflight unknown provider", plan: `plan([model(live, literal("x"), [], a), final(var(a))])`,
			scope: ScopePlan, kind: KindUnknownProvider, want: "value=live"},
		// rlm_completion_test (recursive validation)
		{name: "recursion depth", plan: `plan([rlm(plan([rlm(plan([final(literal(x))]), c), final(var(c))]), r), final(var(r))])`,
			edit: func(p *Policy) { p.Budget.MaxRecursionDepth = 1 }, scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "recursion_depth_exceeded(2,1)"},
		// upstream's plan API (plan_validate/4, plan_run/5): depth is a budget, in levels from 1
		{name: "depth as a plan budget", plan: `plan([rlm(plan([rlm(plan([final(literal(x))]), c), final(var(c))]), r), final(var(r))])`,
			edit:  func(p *Policy) { p.Budget.MaxRecursionDepth = 1; p.DepthIsBudget = true },
			scope: ScopePlan, kind: KindBudgetExceeded, want: "budget=depth estimated=3 limit=2"},
		{name: "depth as a plan budget inside parallel", plan: `plan([parallel([plan([rlm(plan([final(literal(x))]), c), final(var(c))])], p), final(var(p))])`,
			edit:  func(p *Policy) { p.Budget.MaxRecursionDepth = 0; p.DepthIsBudget = true },
			scope: ScopePlan, kind: KindBudgetExceeded, want: "budget=depth estimated=2 limit=1"},
		{name: "a child completion reads the context input", plan: `plan([rlm(query("sub"), r), final(var(r))])`,
			edit: func(p *Policy) { p.Inputs = []string{"query"} }, scope: ScopePlan, kind: KindInvalidPlan, want: "missing_input(context)"},
		{name: "duplicate recursive call", plan: `plan([rlm(plan([final(literal("same-child"))]), a), rlm(plan([final(literal("same-child"))]), b), final(var(b))])`,
			scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "duplicate_recursive_call"},
		{name: "duplicate child completion", plan: `plan([rlm(query("same"), a), rlm(query("same"), b), final(var(b))])`,
			scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "duplicate_recursive_call"},
		{name: "child capability denied", plan: `plan([rlm(plan([tool(count_items, literal([]), s), final(var(s))]), r), final(var(r))])`,
			edit: func(p *Policy) { p.ChildCapabilities = MustCapabilities("rlm", "model(openrouter)") }, scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "child_capability_denied(tool(count_items))"},
		{name: "grandchild capability denied", plan: `plan([rlm(plan([rlm(plan([tool(count_items, literal(json([secret(true)])), s), final(var(s))]), g), final(var(g))]), r), final(var(r))])`,
			edit: func(p *Policy) { p.ChildCapabilities = MustCapabilities("rlm", "model(openrouter)") }, scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "child_capability_denied(tool(count_items))"},
		{name: "child needs rlm for grandchild", plan: `plan([rlm(plan([rlm(plan([final(literal(1))]), g), final(var(g))]), r), final(var(r))])`,
			edit: func(p *Policy) { p.ChildCapabilities = MustCapabilities("model(openrouter)") }, scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "child_capability_denied(rlm)"},
		{name: "repeated recursive retry", plan: `plan([retry(3, plan([rlm(plan([final(literal(1))]), c), final(var(c))]), r), final(var(r))])`,
			scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "repeated_recursive_retry(3)"},
		{name: "ancestor cycle", plan: `plan([rlm(plan([final(literal(1))]), c), final(var(c))])`,
			edit:  func(p *Policy) { p.Ancestors = []uint64{fingerprint(mustTerm(`plan([final(literal(1))])`))} },
			scope: ScopeCompletion, kind: KindRecursivePlanRejected, want: "recursive_cycle("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustTerm(tc.plan)
			pol := base
			if tc.edit != nil {
				tc.edit(&pol)
			}
			_, err := Validate(p, pol)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate = %v; want an *Error", err)
			}
			if e.Scope != tc.scope || e.Kind != tc.kind || !strings.Contains(e.Error(), tc.want) {
				t.Fatalf("Validate error %v\nwant %s %s containing %q", e, tc.scope, tc.kind, tc.want)
			}
		})
	}
}

func TestValidateCyclicPlan(t *testing.T) {
	// A hand-built (or handler-built) plan can contain itself.
	p := &Plan{}
	p.Steps = []Step{&RLMStep{Plan: p, Bind: "loop"}, &FinalStep{Value: VarRef{Name: "loop"}}}
	_, err := Validate(p, Policy{Capabilities: MustCapabilities("rlm"), ChildCapabilities: MustCapabilities("rlm"), Budget: DefaultBudget()})
	if kindOf(err) != KindRecursivePlanRejected || !strings.HasPrefix(detailOf(err), "recursive_cycle") {
		t.Fatalf("Validate(cyclic) = %v, want recursive_plan_rejected recursive_cycle", err)
	}
}

func TestValidateStats(t *testing.T) {
	p := mustTerm(`plan([rlm(plan([rlm(plan([final(literal(2))]), g), final(var(g))]), c), final(var(c))])`)
	b := DefaultBudget()
	b.MaxRecursionDepth = 2
	caps := MustCapabilities("rlm")
	st, err := Validate(p, Policy{Capabilities: caps, ChildCapabilities: caps, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	if st.RecursiveCalls != 2 || st.MaxDepth != 2 || len(st.Fingerprints) != 2 || st.Steps != 5 {
		t.Fatalf("stats = %+v", st)
	}
}

func mustTerm(s string) *Plan {
	p, err := ParseTerm(s, TermsForTest)
	if err != nil {
		panic(err)
	}
	return p
}

func TestBudgetOverlay(t *testing.T) {
	b, err := DefaultBudget().Overlay(map[string]any{"max_tool_calls": int64(0), "time_limit": 1.5, "max_cost_usd": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if b.MaxToolCalls != 0 || b.TimeLimit.Seconds() != 1.5 || b.MaxCostUSD != 1 {
		t.Fatalf("overlay = %+v", b)
	}
	for _, tc := range []struct {
		fields map[string]any
		detail string
	}{
		{map[string]any{"max_tokens": int64(5)}, "unknown_budget_field(max_tokens)"},
		{map[string]any{"max_iterations": int64(0)}, "invalid_positive_integer(max_iterations,0)"},
		{map[string]any{"max_tool_calls": int64(-1)}, "invalid_nonnegative_integer(max_tool_calls,-1)"},
		{map[string]any{"max_iterations": 2.5}, "invalid_integer(max_iterations,2.5)"},
		{map[string]any{"time_limit": int64(0)}, "invalid_positive_number(time_limit,0)"},
		{map[string]any{"max_cost_usd": -0.5}, "invalid_nonnegative_number(max_cost_usd,-0.5)"},
	} {
		_, err := DefaultBudget().Overlay(tc.fields)
		if kindOf(err) != KindCompletionFault || detailOf(err) != tc.detail {
			t.Errorf("Overlay(%v) = %v, want completion_fault %s", tc.fields, err, tc.detail)
		}
	}
}

func TestMeterUnknownUsage(t *testing.T) {
	b := DefaultBudget()
	b.MaxTotalTokens = 100
	m := newMeter(b)
	limit, err := m.beginCall(1024, false)
	if err != nil || limit != 100 {
		t.Fatalf("beginCall = %d, %v; want the cap min(1024, 100)", limit, err)
	}
	// No usage at all: the prompt's 30 bytes / 3 plus the 100-token cap.
	err = m.endCall(Usage{}, 30, limit)
	if kindOf(err) != KindTokenBudgetExceeded {
		t.Fatalf("endCall(unknown) = %v, want token_budget_exceeded", err)
	}
	tot := m.totals()
	if tot.TokensKnown || tot.CostKnown || tot.EstimatedTokens != 110 {
		t.Fatalf("totals = %+v", tot)
	}
	if v, _ := err.(*Error).Get("estimated"); v != true {
		t.Fatalf("error %v does not say the count was estimated", err)
	}
}

func TestMeterExhaustsEachCounter(t *testing.T) {
	for _, counter := range []string{"", "model_calls", "tool_calls", "context_ops"} {
		b := Budget{MaxIterations: 10, MaxModelCalls: 1, MaxToolCalls: 1, MaxContextOps: 1, MaxOutputBytes: 10, MaxTotalTokens: 10, TimeLimit: 1}
		if counter == "" {
			b.MaxIterations = 1
		}
		m := newMeter(b)
		if err := m.step(counter); err != nil {
			t.Fatal(err)
		}
		err := m.step(counter)
		want := counter
		if want == "" {
			want = "steps"
		}
		if e, ok := err.(*Error); !ok || e.Kind != KindBudgetExhausted || !strings.Contains(e.Error(), "budget="+want) {
			t.Errorf("second step(%q) = %v, want budget_exhausted %s", counter, err, want)
		}
	}
	m := newMeter(Budget{MaxOutputBytes: 10})
	if err := m.output(8); err != nil {
		t.Fatal(err)
	}
	if err := m.output(3); kindOf(err) != KindBudgetExhausted || !strings.Contains(err.Error(), "remaining=2") {
		t.Errorf("output over = %v", err)
	}
}

func TestValidateSharedSubplans(t *testing.T) {
	// A hand-built plan may share subplans: small in memory, 2^40 steps as a
	// tree. Validation stops early instead of walking it.
	p := &Plan{Steps: []Step{&FinalStep{Value: Literal{Value: int64(0)}}}}
	for i := range 30 {
		a, b := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		p = &Plan{Steps: []Step{&RLMStep{Plan: p, Bind: a}, &RLMStep{Plan: p, Bind: b}, &FinalStep{Value: VarRef{Name: b}}}}
	}
	caps := MustCapabilities("rlm")
	_, err := Validate(p, Policy{Capabilities: caps, ChildCapabilities: caps, Budget: DefaultBudget()})
	if !strings.HasPrefix(detailOf(err), "plan_too_large") {
		t.Fatalf("Validate = %v, want plan_too_large", err)
	}
}
