package host

// Plan family: upstream's plan API over host/plan — the same parser,
// validator and executor rlm_completion/4 uses, never a second
// implementation.
//
//	plan_parse(+Input, -Outcome) is det.
//	plan_validate(+Plan, +Capabilities, +Budget, -Outcome) is det.
//	plan_run(+Plan, +Capabilities, +Options, +Inputs, -Outcome) is det.
//	plan_run(+Plan, +Context, +Capabilities, +Options, -Outcome) is det.
//
// plan_run/5 has two argument orders: upstream's (the second argument is
// the capability list) and the (the second is the context); a list
// in second place means upstream's.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/prolog"
)

// planLimits bound the plan term plan_parse/2 hands back (its text is the
// canonical rendering of a plan that was itself read under bounds).
var planLimits = prolog.ReadLimits{MaxBytes: 4 << 20, MaxDepth: 256, MaxTerms: 1 << 20}

// recursivePlanErr is upstream's recursive check refusing a plan term
// before anything else looks at it: recursive_plan_rejected in phase
// validate (a new value each time: a completion adds fields to its error).
func recursivePlanErr(detail *plan.Detail, msg string) *plan.Error {
	return &plan.Error{Scope: plan.ScopeCompletion, Phase: plan.PhaseValidate, Kind: plan.KindRecursivePlanRejected,
		Detail: detail, Message: msg}
}

// cyclicPlanErr is a plan term that contains itself.
func cyclicPlanErr() *plan.Error {
	return recursivePlanErr(plan.D("recursive_cycle", plan.Atom("cyclic_term")), "the plan is a cyclic term")
}

// planOf reads a plan given as a plan([...]) term, a validated_plan record
// (plan_validate/4's), or text (JSON or a term plan, as a planner writes
// it). An unbound input throws; anything else that is not a plan is a
// plan_error outcome (unsupported_input with value_shape, or the parser's
// error, a plan term's in termPhase).
func planOf(c *prolog.Call, t engine.Term, termPhase plan.Phase) (*plan.Plan, error) {
	r := c.Resolve(t)
	if _, isVar := r.(engine.Variable); isVar {
		return nil, prolog.InstantiationError()
	}
	if !prolog.Acyclic(r, c.Env) {
		return nil, cyclicPlanErr()
	}
	if cp, isCompound := r.(engine.Compound); isCompound && cp.Arity() == 1 {
		switch cp.Functor().String() {
		case "plan":
			p, err := plan.FromTerm(planterm.Tree(r, c.Env))
			var pe *plan.ParseError
			if errors.As(err, &pe) {
				pe.Phase = termPhase
			}
			return p, parseErr(err)
		case "validated_plan":
			if f, err := fieldsOf(c, cp.Arg(0)); err == nil && f["plan"] != nil {
				return planOf(c, f["plan"], termPhase)
			}
		}
	}
	if text, err := prolog.TextOf(r, c.Env); err == nil {
		if _, isNum := r.(engine.Integer); !isNum {
			p, err := plan.ParseText(text, planterm.Reader{})
			return p, parseErr(err)
		}
	}
	return nil, &plan.Error{Scope: plan.ScopePlan, Phase: plan.PhaseParse, Kind: plan.KindUnsupportedInput,
		Fields:  []plan.Field{{Key: "value_shape", Value: shapeOf(r)}},
		Message: "plan input must be a plan term, JSON text or plan text"}
}

// shapeOf is upstream's value_shape: the type of a value, and the
// functor of a compound.
func shapeOf(t engine.Term) any {
	switch v := t.(type) {
	case engine.Integer:
		return plan.Atom("integer")
	case engine.Float:
		return plan.Atom("float")
	case engine.Atom:
		return plan.Atom("atom")
	case engine.Compound:
		return plan.Compound{Functor: "compound", Args: []any{plan.Atom(v.Functor().String()), int64(v.Arity())}}
	}
	return plan.Atom("other")
}

// parseErr turns a parser's *ParseError into the plan_error it stands for.
func parseErr(err error) error {
	var pe *plan.ParseError
	if errors.As(err, &pe) {
		return pe.AsError()
	}
	return err
}

// planTerm is p as the plan([...]) term plan_parse/2 returns.
func planTerm(p *plan.Plan) (engine.Term, error) {
	return prolog.ReadTerm(p.String(), planLimits)
}

func (s *Session) planParse(c *prolog.Call, input, out engine.Term) (bool, error) {
	p, err := planOf(c, input, plan.PhaseNormalize)
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	t, err := planTerm(p)
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	return c.Unify(out, ok(t)), nil
}

// capabilityList reads a list of capability terms. A non-list throws; a
// capability outside the catalogue is a completion_fault outcome
// (capability_error invalid_capabilities), as rlm_completion/4's.
func (s *Session) capabilityList(c *prolog.Call, t engine.Term) ([]plan.Capability, error) {
	elems, err := c.List(t)
	if err != nil {
		return nil, err
	}
	caps := make([]plan.Capability, 0, len(elems))
	for _, e := range elems {
		r := c.Resolve(e)
		if _, isVar := r.(engine.Variable); isVar {
			return nil, prolog.InstantiationError()
		}
		if !prolog.Acyclic(r, c.Env) {
			return nil, prolog.TypeError("acyclic_term", engine.NewAtom("<cyclic>"))
		}
		cp, err := plan.ParseCapability(s.capabilityText(c, r))
		if err != nil {
			return nil, err
		}
		caps = append(caps, cp)
	}
	return plan.NormalizeCapabilities(caps)
}

// capabilityText is a capability term as plan.ParseCapability reads it,
// Kind or Kind(Name) written with writeq. A term nested deeper is no
// capability and is described capped (Describe), never written whole: its
// text would be the error's culprit, as long as the term (and the
// engine's writer was quadratic in depth, 11 s for 10,000 levels).
func (s *Session) capabilityText(c *prolog.Call, t engine.Term) string {
	if cp, isCompound := c.Resolve(t).(engine.Compound); isCompound {
		for i := range cp.Arity() {
			if _, nested := c.Resolve(cp.Arg(i)).(engine.Compound); nested {
				return s.in.Describe(t, c.Env)
			}
		}
	}
	return s.in.WriteQ(prolog.Resolved(t, c.Env), nil)
}

// planBudgetKeys are upstream's plan_budget fields; the completion budget's
// fields (default_completion_budget/1) are accepted too.
var planBudgetKeys = []string{"max_steps", "max_depth", "max_parallel", "max_model_calls", "max_tool_calls",
	"max_context_ops", "max_output_bytes", "time_limit"}

// defaultPlanBudget is upstream's plan_budget default (max_steps 64,
// max_depth 4, max_parallel 8, max_model_calls 8, max_tool_calls 16,
// max_context_ops 32, max_output_bytes 65536, time_limit 10.0) in the
// completion budget's terms. Upstream's depth counts every nesting level
// from 1; ours counts rlm nesting from 0, so max_depth D is
// max_recursion_depth D-1.
func defaultPlanBudget() plan.Budget {
	b := plan.DefaultBudget()
	b.MaxIterations, b.MaxRecursionDepth, b.MaxConcurrentSubcalls = 64, 3, 8
	b.MaxModelCalls, b.MaxToolCalls, b.MaxContextOps = 8, 16, 32
	b.MaxOutputBytes, b.TimeLimit = 65536, 10*time.Second
	return b
}

// planBudgetOf reads default, a list of budget fields or a plan_budget
// record. An unknown field or a bad value is the outcome
// plan_error([detail(unknown_budget_field(K)) | invalid_budget_field(K, V),
// kind(invalid_plan), phase(validate)]), as upstream.
func planBudgetOf(c *prolog.Call, t engine.Term) (plan.Budget, error) {
	b := defaultPlanBudget()
	r := c.Resolve(t)
	if a, isAtom := r.(engine.Atom); isAtom && a.String() == "default" {
		return b, nil
	}
	props, err := c.Props(optionList(c, r, "plan_budget", "completion_budget"))
	if err != nil {
		return b, err
	}
	bad := func(d *plan.Detail, msg string) error {
		return &plan.Error{Scope: plan.ScopePlan, Phase: plan.PhaseValidate, Kind: plan.KindInvalidPlan, Detail: d, Message: msg}
	}
	fields := map[string]any{}
	for _, p := range props {
		v := c.Resolve(p.Value.(engine.Term))
		var gv any
		switch n := v.(type) {
		case engine.Integer:
			gv = int64(n)
		case engine.Float:
			gv = float64(n)
		default:
			return b, bad(plan.D("invalid_budget_field", plan.Atom(p.Key), c.In.Describe(v, c.Env)), "budget "+p.Key+" must be a number")
		}
		i, isInt := gv.(int64)
		switch p.Key {
		case "max_steps":
			p.Key = "max_iterations"
		case "max_depth":
			if !isInt || i < 1 {
				return b, bad(plan.D("invalid_budget_field", plan.Atom(p.Key), gv), "budget max_depth must be a positive integer")
			}
			p.Key, gv = "max_recursion_depth", i-1
		case "max_parallel":
			p.Key = "max_concurrent_subcalls"
		}
		if _, dup := fields[p.Key]; !dup {
			fields[p.Key] = gv
		}
	}
	nb, err := b.Overlay(fields)
	var pe *plan.Error
	if errors.As(err, &pe) {
		return b, bad(pe.Detail, pe.Message)
	}
	return nb, err
}

// validatedTerm is ok(validated_plan([...])): the plan, the normalized
// capabilities, the budget in upstream's plan_budget fields, the static
// estimate and the recursion statistics.
func validatedTerm(p *plan.Plan, caps []plan.Capability, b plan.Budget, st plan.Stats) (engine.Term, error) {
	pt, err := planTerm(p)
	if err != nil {
		return nil, err
	}
	return record("validated_plan",
		fld("budget", planBudgetTerm(b)),
		fld("capabilities", capsTerm(caps)),
		fld("estimate", record("plan_estimate",
			fld("context_ops", engine.Integer(st.ContextOps)), fld("depth", engine.Integer(st.MaxDepth+1)),
			fld("model_calls", engine.Integer(st.ModelCalls)), fld("parallel_width", engine.Integer(st.Width)),
			fld("steps", engine.Integer(st.Steps)), fld("tool_calls", engine.Integer(st.ToolCalls)))),
		fld("plan", pt),
		fld("recursion", recursionTerm(st)),
	), nil
}

func planBudgetTerm(b plan.Budget) engine.Term {
	return record("plan_budget",
		fld("max_context_ops", engine.Integer(b.MaxContextOps)), fld("max_depth", engine.Integer(b.MaxRecursionDepth+1)),
		fld("max_model_calls", engine.Integer(b.MaxModelCalls)), fld("max_output_bytes", engine.Integer(b.MaxOutputBytes)),
		fld("max_parallel", engine.Integer(b.MaxConcurrentSubcalls)), fld("max_steps", engine.Integer(b.MaxIterations)),
		fld("max_tool_calls", engine.Integer(b.MaxToolCalls)), fld("time_limit", engine.Float(b.TimeLimit.Seconds())))
}

// capsTerm renders capabilities as terms (tool(x), not 'tool(x)').
func capsTerm(caps []plan.Capability) engine.Term {
	ts := make([]engine.Term, len(caps))
	for i, cp := range caps {
		ts[i], _ = planterm.ToTerm(cp.Term())
	}
	return engine.List(ts...)
}

// recursionTerm is upstream's recursion_stats: rlm steps anywhere, the
// deepest rlm nesting (root 0) and the children's fingerprints.
func recursionTerm(st plan.Stats) engine.Term {
	fps := make([]engine.Term, len(st.Fingerprints))
	for i, f := range st.Fingerprints {
		fps[i] = engine.Integer(int64(f & math.MaxInt64))
	}
	return record("recursion_stats", fld("fingerprints", engine.List(fps...)),
		fld("max_depth", engine.Integer(st.MaxDepth)), fld("recursive_calls", engine.Integer(st.RecursiveCalls)))
}

func (s *Session) planValidate(c *prolog.Call, planArg, capsArg, budgetArg, out engine.Term) (bool, error) {
	// Upstream validates a plan term as it is: a step of no known shape is
	// a validation error there, not a normalization one.
	p, err := planOf(c, planArg, plan.PhaseValidate)
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	caps, err := s.capabilityList(c, capsArg)
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	b, err := planBudgetOf(c, budgetArg)
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	st, err := plan.Validate(p, plan.Policy{Capabilities: caps, ChildCapabilities: caps, Budget: b, NoPreflight: true, DepthIsBudget: true})
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	t, err := validatedTerm(p, caps, b, st)
	if err != nil {
		return s.fail(c, out, phPlan, err)
	}
	return c.Unify(out, ok(t)), nil
}

// planRun is plan_run/5 in either argument order.
func (s *Session) planRun(c *prolog.Call, a1, a2, a3, a4, out engine.Term) (bool, error) {
	planArg := a1
	var ctxArg, capsArg, optsArg, query engine.Term
	if isListTerm(c, a2) || c.Resolve(a2) == engine.NewAtom("[]") {
		// Upstream: plan_run(Plan, Capabilities, Options, Inputs, Outcome),
		// Inputs a record of context(C) and query(Q), both optional (a
		// plan that reads a missing one is refused before it runs).
		capsArg, optsArg = a2, a3
		f, err := fieldsOf(c, optionList(c, a4))
		if err != nil {
			return false, err
		}
		ctxArg, query = f["context"], f["query"]
	} else {
		ctxArg, capsArg, optsArg = a2, a3, a4
	}
	sp, err := s.decode(c, "plan_run/5", optsArg)
	if err != nil {
		return s.done(c, out, phPlan, err, nil)
	}
	if query == nil && sp.op.has("query") {
		query = sp.op.term("query")
	}
	if query != nil {
		if sp.in.Query, err = c.Text(query); err != nil {
			return false, err
		}
	}
	if sp.in.Capabilities, err = s.capabilityList(c, capsArg); err != nil {
		return s.done(c, out, phPlan, err, sp)
	}
	if sp.op.has("child_capabilities") {
		if sp.in.ChildCapabilities, err = s.capabilityList(c, sp.op.term("child_capabilities")); err != nil {
			return s.done(c, out, phPlan, err, sp)
		}
	}
	if err := s.planRunTools(c, sp); err != nil {
		return s.done(c, out, phPlan, err, sp)
	}
	if sp.op.has("context_options") {
		lim, _, err := s.limits(c, "context_register/3", optionList(c, sp.op.term("context_options")))
		if err != nil {
			return false, err
		}
		sp.in.ContextLimits = lim
	}
	b := defaultPlanBudget()
	if sp.op.has("budget") {
		if b, err = planBudgetOf(c, sp.op.term("budget")); err != nil {
			return s.done(c, out, phPlan, err, sp)
		}
	}
	sp.in.Budget, sp.in.DepthIsBudget = &b, true
	if sp.in.Plan, err = planOf(c, planArg, plan.PhaseNormalize); err != nil {
		return s.done(c, out, phPlan, err, sp)
	}
	if ctxArg != nil {
		if sp.in.Context, err = s.contextOf(c, ctxArg, sp); err != nil {
			return s.done(c, out, phPlan, err, sp)
		}
	}
	return s.complete(c, out, phPlan, sp)
}

func isListTerm(c *prolog.Call, t engine.Term) bool {
	cp, isCompound := c.Resolve(t).(engine.Compound)
	return isCompound && cp.Functor().String() == "." && cp.Arity() == 2
}

// planRunTools reads tools([tool(Name, Handler)]) (upstream's registry) or
// rlm_completion/4's tool(Name, Description, Schema, Handler).
func (s *Session) planRunTools(c *prolog.Call, sp *spec) error {
	if !sp.op.has("tools") {
		return nil
	}
	elems, _ := c.List(sp.op.term("tools"))
	tools := prologTools{cb: sp.cb, handlers: map[string]engine.Term{}}
	for _, e := range elems {
		tt, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound || tt.Functor().String() != "tool" || (tt.Arity() != 2 && tt.Arity() != 4) {
			return prolog.TypeError("tool", prolog.Resolved(e, c.Env))
		}
		name, err := c.Atom(tt.Arg(0))
		if err != nil {
			return err
		}
		h := tt.Arg(tt.Arity() - 1)
		if _, err := c.Callable(h); err != nil {
			return err
		}
		ts := plan.ToolSchema{Name: name}
		if tt.Arity() == 4 {
			if ts.Description, err = c.Text(tt.Arg(1)); err != nil {
				return err
			}
			if ts.Schema, err = c.Text(tt.Arg(2)); err != nil {
				return err
			}
		}
		if slices.ContainsFunc(sp.in.Tools, func(x plan.ToolSchema) bool { return x.Name == name }) {
			return prolog.DomainError("unique_tool_names", engine.NewAtom(name))
		}
		tools.handlers[name] = prolog.Resolved(h, c.Env)
		sp.in.Tools = append(sp.in.Tools, ts)
	}
	sp.deps.Tools = tools
	return nil
}

// completionResultTerm is the success record of rlm_completion/4 and
// plan_run/5.
func completionResultTerm(res *plan.Outcome) (engine.Term, error) {
	value, err := planterm.ToTerm(res.Value)
	if err != nil {
		return nil, err
	}
	checkpoints := make([]engine.Term, len(res.Checkpoints))
	for i, cp := range res.Checkpoints {
		checkpoints[i] = engine.NewAtom(cp)
	}
	names := make([]string, 0, len(res.Vars))
	for n := range res.Vars {
		names = append(names, n)
	}
	slices.Sort(names)
	vars := make([]prolog.Field, 0, len(names))
	for _, n := range names {
		v, err := planterm.ToTerm(res.Vars[n])
		if err != nil {
			return nil, fmt.Errorf("host: plan variable %s: %w", n, err)
		}
		vars = append(vars, fld(n, v))
	}
	return record("completion_result",
		fld("checkpoints", engine.List(checkpoints...)),
		fld("child_capabilities", capsTerm(res.ChildCapabilities)),
		fld("plan", prolog.Chars(res.Plan.String())),
		fld("planner_attempts", engine.Integer(res.PlannerAttempts)),
		fld("recursion", recursionStatsTerm(res)),
		fld("remaining", countersTerm(res.Remaining)),
		fld("trajectory", trajectoryTerm(res.Trajectory)),
		fld("transitions", transitionsTerm(res.Trajectory)),
		fld("usage", usageTerm(res.Usage)),
		fld("used", countersTerm(res.Used)),
		fld("value", value),
		fld("vars", record("bindings", vars...)),
	), nil
}

// transitionsTerm is upstream's transitions: the plan steps that finished,
// in the trajectory's order (nested steps before the step holding them),
// each plan_transition([bind(B), operation(Op), sequence(N), status(ok)])
// with Op a term (context(search), tool(count_items), final, ...) and B
// none for a step that binds nothing. The planner's calls are not steps.
func transitionsTerm(t plan.Trajectory) engine.Term {
	var ts []engine.Term
	for _, ev := range t.Events {
		if ev.Op == "planner" || ev.Status != "ok" {
			continue
		}
		var op engine.Term = engine.NewAtom(ev.Op)
		if name, arg, isCompound := strings.Cut(ev.Op, "("); isCompound {
			op = engine.NewAtom(name).Apply(engine.NewAtom(strings.TrimSuffix(arg, ")")))
		}
		bind := "none"
		if ev.Bind != "" {
			bind = ev.Bind
		}
		ts = append(ts, record("plan_transition", fld("bind", engine.NewAtom(bind)), fld("operation", op),
			fld("sequence", engine.Integer(len(ts)+1)), fld("status", engine.NewAtom("ok"))))
	}
	return engine.List(ts...)
}

// recursionStatsTerm is recursion([calls(N), children(K), depth(D),
// fingerprints(Fs), max_depth(M)]): the rlm steps the plan holds (calls),
// the child completions run (children), the deepest recursion reached at
// run time (depth) and the static deepest nesting (max_depth).
func recursionStatsTerm(res *plan.Outcome) engine.Term {
	st := res.Recursion
	fps := make([]engine.Term, len(st.Fingerprints))
	for i, f := range st.Fingerprints {
		fps[i] = engine.Integer(int64(f & math.MaxInt64))
	}
	return record("recursion",
		fld("calls", engine.Integer(st.RecursiveCalls)),
		fld("children", engine.Integer(res.ChildCompletions)),
		fld("depth", engine.Integer(res.Used.Depth)),
		fld("fingerprints", engine.List(fps...)),
		fld("max_depth", engine.Integer(st.MaxDepth)))
}
