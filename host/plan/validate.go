package plan

import (
	"fmt"
	"slices"
)

// Policy is what a plan is validated against.
type Policy struct {
	// Capabilities are granted to the plan's own steps (and to steps inside
	// its parallel and retry bodies).
	Capabilities []Capability
	// ChildCapabilities are granted to rlm children, and to their own
	// children: never more than Capabilities (narrowed, never widened).
	ChildCapabilities []Capability
	// Inputs are the names input(N) may use. Nil means context and query.
	Inputs []string
	// Budget is checked against the static estimate. Used is what was
	// already spent (the planner calls), so the estimate must fit in the
	// rest.
	Budget Budget
	Used   Counters
	// Depth is the recursion depth of the plan (root 0).
	Depth int
	// Providers and Tools are what the runtime can call: a model step's
	// provider or a tool step's name not listed is a preflight error.
	Providers []string
	Tools     []string
	// Ancestors are the fingerprints of the plans above this one (for
	// child completions planned at run time).
	Ancestors []uint64
	// NoPreflight skips step 5 (plan_validate/4 checks a plan before any
	// runtime exists; plan_run/5 preflights it against its own).
	NoPreflight bool
	// DepthIsBudget reports rlm nesting deeper than MaxRecursionDepth as
	// upstream's plan API does, a plan_error budget_exceeded with budget
	// depth and the estimate and limit in its levels (the root plan is
	// level 1), instead of recursive_plan_rejected: plan_validate/4 and
	// plan_run/5, whose budget is upstream's plan_budget.
	DepthIsBudget bool
}

// Stats are the static facts [Validate] learned about a plan.
type Stats struct {
	Steps, ModelCalls, ToolCalls, ContextOps int // the static estimate
	Width                                    int // widest parallel step
	RecursiveCalls                           int // rlm steps anywhere
	MaxDepth                                 int // deepest rlm nesting (root 0)
	Fingerprints                             []uint64
}

// Validate checks a whole plan before any side effect, in this order, and
// returns the first problem as an [*Error]:
//
//  1. structure (plan_error validate invalid_plan): non-empty step lists,
//     exactly one final and it is last (in nested plans too), known step
//     and expression shapes, allow-listed context actions with valid
//     integers, scopes (var(N) only after N is bound in a visible scope; a
//     name bound once in its visible scope), known input names;
//  2. recursion (completion_error validate recursive_plan_rejected): a
//     cyclic plan, an rlm child equal to an ancestor (recursive_cycle), a
//     retry(N>1) around rlm (repeated_recursive_retry(N)), the same child
//     twice (duplicate_recursive_call), rlm nesting deeper than
//     MaxRecursionDepth (recursion_depth_exceeded(D, Max)), and any child
//     step not allowed by ChildCapabilities (child_capability_denied(C));
//  3. capabilities of the plan's own steps (plan_error validate
//     capability_denied);
//  4. the static budget estimate (plan_error validate budget_exceeded):
//     steps, model calls, tool calls and context operations;
//  5. preflight (plan_error preflight unknown_provider / unknown_tool).
func Validate(p *Plan, pol Policy) (Stats, error) {
	if pol.Inputs == nil {
		pol.Inputs = []string{"context", "query"}
	}
	v := &validator{pol: pol, onPath: map[*Plan]bool{}}
	if err := v.structure(p, nil, 0); err != nil {
		return Stats{}, err
	}
	if d := pol.Depth + rlmDepth(p); pol.DepthIsBudget && d > pol.Budget.MaxRecursionDepth {
		return Stats{}, planErr(PhaseValidate, KindBudgetExceeded,
			fmt.Sprintf("the plan nests %d levels deep but the budget allows %d", d+1, pol.Budget.MaxRecursionDepth+1),
			Field{"budget", Atom("depth")}, Field{"estimated", int64(d + 1)}, Field{"limit", int64(pol.Budget.MaxRecursionDepth + 1)})
	}
	if err := v.recursion(p, pol.Depth, slices.Clone(pol.Ancestors), 1); err != nil {
		return Stats{}, err
	}
	seen := map[uint64]bool{}
	for _, f := range v.stats.Fingerprints {
		if seen[f] {
			return Stats{}, rejected(D("duplicate_recursive_call"), "the plan makes the same recursive call twice")
		}
		seen[f] = true
	}
	if err := v.caps(p, pol.Capabilities); err != nil {
		return Stats{}, err
	}
	est := estimate(p)
	v.stats.Steps, v.stats.ModelCalls, v.stats.ToolCalls, v.stats.ContextOps, v.stats.Width =
		est.steps, est.model, est.tool, est.context, est.width
	for _, c := range []struct {
		name       string
		est, limit int
	}{
		{"steps", est.steps, pol.Budget.MaxIterations - pol.Used.Steps},
		{"model_calls", est.model, pol.Budget.MaxModelCalls - pol.Used.ModelCalls},
		{"tool_calls", est.tool, pol.Budget.MaxToolCalls - pol.Used.ToolCalls},
		{"context_ops", est.context, pol.Budget.MaxContextOps - pol.Used.ContextOps},
	} {
		if c.est > c.limit {
			return Stats{}, planErr(PhaseValidate, KindBudgetExceeded,
				fmt.Sprintf("the plan needs up to %d %s but the budget leaves %d", c.est, c.name, c.limit),
				Field{"budget", Atom(c.name)}, Field{"estimated", int64(c.est)}, Field{"limit", int64(c.limit)})
		}
	}
	if pol.NoPreflight {
		return v.stats, nil
	}
	if err := v.preflight(p); err != nil {
		return Stats{}, err
	}
	return v.stats, nil
}

type validator struct {
	pol    Policy
	stats  Stats
	onPath map[*Plan]bool
	plans  int // plans visited (a hand-built plan may share subplans)
}

func rejected(d *Detail, msg string) *Error {
	e := complErr(PhaseValidate, KindRecursivePlanRejected, msg)
	e.Detail = d
	return e
}

// scope is a chain of visible bindings.
type scope struct {
	names  map[string]bool
	parent *scope
}

func (s *scope) has(n string) bool {
	for ; s != nil; s = s.parent {
		if s.names[n] {
			return true
		}
	}
	return false
}

func (v *validator) structure(p *Plan, parent *scope, nest int) error {
	if p == nil {
		return invalid(PhaseValidate, D("empty_plan"), "a nested plan is missing")
	}
	if v.onPath[p] {
		return rejected(D("recursive_cycle", Atom("cyclic_term")), "the plan contains itself")
	}
	if nest > maxPlanNesting {
		return invalid(PhaseValidate, D("plan_too_deep", int64(maxPlanNesting)), fmt.Sprintf("plans nest deeper than %d levels", maxPlanNesting))
	}
	if v.plans++; v.plans > maxPlanNodes/10 {
		return invalid(PhaseValidate, D("plan_too_large", int64(maxPlanNodes/10)), "the plan has too many nested plans")
	}
	v.onPath[p] = true
	defer delete(v.onPath, p)
	if len(p.Steps) == 0 {
		return invalid(PhaseValidate, D("empty_plan"), "a plan needs at least one step, ending with final")
	}
	for i, s := range p.Steps {
		if _, isFinal := s.(*FinalStep); isFinal != (i == len(p.Steps)-1) {
			return invalid(PhaseValidate, D("final_must_be_unique_and_last"), "a plan has exactly one final step, and it is the last")
		}
	}
	sc := &scope{names: map[string]bool{}, parent: parent}
	bind := func(b string) error {
		if b == "" {
			return invalid(PhaseValidate, D("invalid_text_field", Atom("bind"), ""), "a step's bind must be a non-empty name")
		}
		if sc.has(b) {
			return invalid(PhaseValidate, D("duplicate_binding", Atom(b)), fmt.Sprintf("%s is already bound in this scope; choose a new name", b))
		}
		sc.names[b] = true
		return nil
	}
	for _, s := range p.Steps {
		var err error
		switch s := s.(type) {
		case *ContextStep:
			if err = v.expr(s.Handle, sc, 0); err == nil {
				if err = checkAction(s.Action); err == nil {
					err = bind(s.Bind)
				}
			}
		case *ModelStep:
			if s.Provider == "" {
				err = invalid(PhaseValidate, D("invalid_text_field", Atom("provider"), ""), "a model step needs a provider")
			} else if err = v.expr(s.Prompt, sc, 0); err == nil {
				err = bind(s.Bind)
			}
		case *RLMStep:
			switch {
			case (s.Plan == nil) == (s.Query == nil):
				err = invalid(PhaseValidate, D("invalid_step", Atom("rlm")), "an rlm step has either a nested plan or a query")
			case s.Plan != nil:
				err = v.structure(s.Plan, sc, nest+1)
			default:
				var cexpr Expr = InputRef{Name: "context"} // a child's context defaults to the input
				if s.Context != nil {
					cexpr = s.Context
				}
				if err = v.expr(s.Query, sc, 0); err == nil {
					err = v.expr(cexpr, sc, 0)
				}
			}
			if err == nil {
				err = bind(s.Bind)
			}
		case *ToolStep:
			if s.Name == "" {
				err = invalid(PhaseValidate, D("invalid_text_field", Atom("name"), ""), "a tool step needs a name")
			} else if err = v.expr(s.Args, sc, 0); err == nil {
				err = bind(s.Bind)
			}
		case *ParallelStep:
			if len(s.Plans) == 0 {
				err = invalid(PhaseValidate, D("invalid_list", Atom("plans"), "[]"), "parallel needs at least one branch")
			}
			for _, b := range s.Plans {
				if err == nil {
					err = v.structure(b, sc, nest+1)
				}
			}
			if err == nil {
				err = bind(s.Bind)
			}
		case *RetryStep:
			if s.Attempts < 1 || s.Attempts > 16 {
				err = invalid(PhaseValidate, D("invalid_integer_field", Atom("attempts"), int64(s.Attempts)), "retry attempts must be 1..16")
			} else if err = v.structure(s.Plan, sc, nest+1); err == nil {
				err = bind(s.Bind)
			}
		case *RespondStep:
			if s.Provider == "" {
				err = invalid(PhaseValidate, D("invalid_text_field", Atom("provider"), ""), "a respond step needs a provider")
			} else {
				err = bind(s.Bind)
			}
		case *CheckpointStep:
			if s.Label == "" {
				err = invalid(PhaseValidate, D("invalid_checkpoint_label", ""), "a checkpoint needs a label")
			}
		case *FinalStep:
			err = v.expr(s.Value, sc, 0)
		default:
			err = invalid(PhaseValidate, D("unknown_or_malformed_operation", fmt.Sprintf("%T", s)), "unknown step")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) expr(e Expr, sc *scope, depth int) error {
	if depth > 2*maxPlanNesting {
		return invalid(PhaseValidate, D("expression_too_deep"), "expressions nest too deeply")
	}
	switch e := e.(type) {
	case Literal:
		return nil
	case InputRef:
		if !slices.Contains(v.pol.Inputs, e.Name) {
			return invalid(PhaseValidate, D("missing_input", Atom(e.Name)),
				fmt.Sprintf("there is no input %s; inputs are %v", e.Name, v.pol.Inputs))
		}
	case VarRef:
		if !sc.has(e.Name) {
			return invalid(PhaseValidate, D("unbound_variable", Atom(e.Name)),
				fmt.Sprintf("var(%s) is used before any step binds it", e.Name))
		}
	case FieldOf:
		if e.Key == "" {
			return invalid(PhaseValidate, D("invalid_text_field", Atom("key"), ""), "a field needs a key")
		}
		return v.expr(e.Value, sc, depth+1)
	case List:
		for _, x := range e.Elems {
			if err := v.expr(x, sc, depth+1); err != nil {
				return err
			}
		}
	case Object:
		for _, p := range e.Pairs {
			if err := v.expr(p.Value, sc, depth+1); err != nil {
				return err
			}
		}
	default:
		return invalid(PhaseValidate, D("invalid_reference", fmt.Sprintf("%T", e)), "unknown expression")
	}
	return nil
}

func checkAction(a Action) error {
	bad := func(d *Detail, msg string) error { return invalid(PhaseValidate, d, msg) }
	switch a.Type {
	case "peek":
		if !slices.Contains(selectors, a.Selector) {
			return bad(D("unknown_selector", a.Selector), "peek selector is metadata, head(N), tail(N) or item(I)")
		}
		if a.N < 0 {
			return bad(D("invalid_integer_field", Atom(a.Selector), int64(a.N)), "peek counts are >= 0")
		}
	case "slice":
		if a.Start < 0 || a.Length < 0 {
			return bad(D("invalid_integer_field", Atom("slice"), []any{int64(a.Start), int64(a.Length)}), "slice start and length are >= 0")
		}
	case "search":
		if a.Pattern == "" {
			return bad(D("invalid_search_pattern", ""), "search needs a non-empty pattern")
		}
	case "partition":
		if !slices.Contains(partitions, a.Partition) {
			return bad(D("unknown_partition_strategy", a.Partition), "partition strategy is fixed(N) or lines(N)")
		}
		if a.N < 1 {
			return bad(D("invalid_integer_field", Atom("size"), int64(a.N)), "partition size is > 0")
		}
	case "map":
		if !slices.Contains(transforms, a.Transform) {
			return bad(D("invalid_context_action", Compound{Functor: "map", Args: []any{a.Transform}}),
				"map transform is identity, lowercase, uppercase or length")
		}
	case "reduce":
		if !slices.Contains(reducers, a.Reducer) {
			return bad(D("invalid_context_action", Compound{Functor: "reduce", Args: []any{a.Reducer}}),
				"reduce reducer is count or byte_count")
		}
	default:
		return bad(D("unknown_context_action", a.Type), "context actions are peek, slice, search, partition, map, reduce")
	}
	return nil
}

// recursion walks rlm children: depth is the recursion depth of p, ancestors
// the fingerprints of the plans above p's children.
func (v *validator) recursion(p *Plan, depth int, ancestors []uint64, retryN int) error {
	for _, s := range p.Steps {
		switch s := s.(type) {
		case *RLMStep:
			d := depth + 1
			v.stats.RecursiveCalls++
			v.stats.MaxDepth = max(v.stats.MaxDepth, d)
			if d > v.pol.Budget.MaxRecursionDepth {
				return rejected(D("recursion_depth_exceeded", int64(d), int64(v.pol.Budget.MaxRecursionDepth)),
					fmt.Sprintf("recursion depth %d exceeds the limit of %d", d, v.pol.Budget.MaxRecursionDepth))
			}
			if retryN > 1 {
				return rejected(D("repeated_recursive_retry", int64(retryN)), "a retry with more than one attempt must not contain an rlm step")
			}
			if depth == v.pol.Depth && !hasCap(v.pol.Capabilities, Capability{Kind: "rlm"}) {
				continue // capability_denied, reported by caps; nested ones by childCaps
			}
			var fp uint64
			if s.Plan != nil {
				fp = fingerprint(s.Plan)
			} else {
				// The child's goal and context, not its bind name.
				fp = fingerprint(&Plan{Steps: []Step{&RLMStep{Query: s.Query, Context: s.Context, Bind: "child"}}})
			}
			if slices.Contains(ancestors, fp) {
				return rejected(D("recursive_cycle", int64(fp)), "an rlm child repeats an enclosing plan")
			}
			v.stats.Fingerprints = append(v.stats.Fingerprints, fp)
			if s.Plan != nil {
				if err := v.childCaps(s.Plan); err != nil {
					return err
				}
				if err := v.recursion(s.Plan, d, append(slices.Clone(ancestors), fp), 1); err != nil {
					return err
				}
			}
		case *ParallelStep:
			for _, b := range s.Plans {
				if err := v.recursion(b, depth, ancestors, retryN); err != nil {
					return err
				}
			}
		case *RetryStep:
			if err := v.recursion(s.Plan, depth, ancestors, max(retryN, s.Attempts)); err != nil {
				return err
			}
		}
	}
	return nil
}

// childCaps checks every step of an rlm child (and its own children)
// against the child capabilities.
func (v *validator) childCaps(p *Plan) error {
	var bad *Capability
	walkSteps(p, func(s Step) bool {
		if c, ok := needs(s); ok && !hasCap(v.pol.ChildCapabilities, c) {
			bad = &c
			return false
		}
		return true
	})
	if bad != nil {
		return rejected(D("child_capability_denied", bad.Term()),
			fmt.Sprintf("an rlm child uses %s, which the child capabilities do not grant", bad))
	}
	return nil
}

// caps checks the plan's own steps (not inside rlm children) against caps.
func (v *validator) caps(p *Plan, caps []Capability) error {
	for _, s := range p.Steps {
		if c, ok := needs(s); ok && !hasCap(caps, c) {
			return planErr(PhaseValidate, KindCapabilityDenied, fmt.Sprintf("the step needs capability %s, which is not granted", c),
				Field{"capability", c.Term()})
		}
		switch s := s.(type) {
		case *ParallelStep:
			for _, b := range s.Plans {
				if err := v.caps(b, caps); err != nil {
					return err
				}
			}
		case *RetryStep:
			if err := v.caps(s.Plan, caps); err != nil {
				return err
			}
		}
	}
	return nil
}

// needs returns the capability a step requires.
func needs(s Step) (Capability, bool) {
	switch s := s.(type) {
	case *ContextStep:
		return Capability{Kind: "context", Name: s.Action.Type}, true
	case *ModelStep:
		return Capability{Kind: "model", Name: s.Provider}, true
	case *RespondStep:
		return Capability{Kind: "model", Name: s.Provider}, true
	case *ToolStep:
		return Capability{Kind: "tool", Name: s.Name}, true
	case *RLMStep:
		return Capability{Kind: "rlm"}, true
	case *ParallelStep:
		return Capability{Kind: "parallel"}, true
	case *RetryStep:
		return Capability{Kind: "retry"}, true
	case *CheckpointStep:
		return Capability{Kind: "checkpoint"}, true
	}
	return Capability{}, false
}

// walkSteps visits every step in p, nested ones included, until f returns
// false.
func walkSteps(p *Plan, f func(Step) bool) bool {
	if p == nil {
		return true
	}
	for _, s := range p.Steps {
		if !f(s) {
			return false
		}
		switch s := s.(type) {
		case *RLMStep:
			if !walkSteps(s.Plan, f) {
				return false
			}
		case *ParallelStep:
			for _, b := range s.Plans {
				if !walkSteps(b, f) {
					return false
				}
			}
		case *RetryStep:
			if !walkSteps(s.Plan, f) {
				return false
			}
		}
	}
	return true
}

// rlmDepth is the deepest rlm nesting of a structurally valid plan (0 for
// a plan without rlm steps).
func rlmDepth(p *Plan) int {
	d := 0
	for _, s := range p.Steps {
		switch s := s.(type) {
		case *RLMStep:
			if s.Plan != nil {
				d = max(d, 1+rlmDepth(s.Plan))
			} else {
				d = max(d, 1)
			}
		case *ParallelStep:
			for _, b := range s.Plans {
				d = max(d, rlmDepth(b))
			}
		case *RetryStep:
			d = max(d, rlmDepth(s.Plan))
		}
	}
	return d
}

type est struct{ steps, model, tool, context, width int }

// estimate is the static upper bound: each step costs 1; rlm(plan) 1 +
// child; rlm(query) 2 steps and 1 model call (the child planner and at
// least a final; the child's own plan is checked when it is planned);
// retry(N) 1 + N × body; parallel 1 + the sum of the branches.
func estimate(p *Plan) est {
	var e est
	if p == nil {
		return e
	}
	for _, s := range p.Steps {
		e.steps++
		switch s := s.(type) {
		case *ContextStep:
			e.context++
		case *ModelStep, *RespondStep: // a respond step's tool rounds are metered as they run
			e.model++
		case *ToolStep:
			e.tool++
		case *RLMStep:
			if s.Plan != nil {
				e = e.add(estimate(s.Plan), 1)
			} else {
				e.steps++
				e.model++
			}
		case *ParallelStep:
			e.width = max(e.width, len(s.Plans))
			for _, b := range s.Plans {
				e = e.add(estimate(b), 1)
			}
		case *RetryStep:
			e = e.add(estimate(s.Plan), s.Attempts)
		}
	}
	return e
}

func (e est) add(c est, n int) est {
	e.steps += n * c.steps
	e.model += n * c.model
	e.tool += n * c.tool
	e.context += n * c.context
	e.width = max(e.width, c.width)
	return e
}

func (v *validator) preflight(p *Plan) error {
	var err error
	walkSteps(p, func(s Step) bool {
		switch s := s.(type) {
		case *ModelStep:
			err = v.provider(s.Provider)
		case *RespondStep:
			err = v.provider(s.Provider)
		case *ToolStep:
			if !slices.Contains(v.pol.Tools, s.Name) {
				err = planErr(PhasePreflight, KindUnknownTool, fmt.Sprintf("no tool %s is registered", s.Name), Field{"value", Atom(s.Name)})
			}
		}
		return err == nil
	})
	return err
}

// provider refuses a provider no model dependency serves.
func (v *validator) provider(name string) error {
	if !slices.Contains(v.pol.Providers, name) {
		return planErr(PhasePreflight, KindUnknownProvider, fmt.Sprintf("no provider %s is registered", name), Field{"value", Atom(name)})
	}
	return nil
}
