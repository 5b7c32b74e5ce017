package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// ContextRef is the completion's context: a handle and its metadata (the
// only thing about it the planner sees).
type ContextRef struct {
	Ref      handle.Ref
	Metadata handle.Metadata
}

// none reports a context that was not given (a trusted plan may run
// without one).
func (c ContextRef) none() bool { return c.Ref == handle.Ref{} }

// Input is one completion request. The zero value of each optional field
// means its default, documented where it is declared.
type Input struct {
	// Query is the goal.
	Query string
	// Context is the handle the plan reaches as input(context). Required,
	// unless Plan is set: a trusted plan run without one may not use
	// input(context) (validation: missing_input(context)).
	Context ContextRef
	// Capabilities are the root authority. Nil means rlm, context(Op) for
	// every operation the context answers, and model(P) for every entry of
	// Providers (tools must be granted explicitly).
	Capabilities []Capability
	// ChildCapabilities are the authority of rlm children; they must be a
	// subset of Capabilities (a wider set is a completion_fault,
	// capability_error widening_denied). Nil means Capabilities.
	ChildCapabilities []Capability
	// Tools are the registered tools: the schemas of those the
	// capabilities grant are shown to the planner, and a tool step naming
	// any other tool fails preflight.
	Tools []ToolSchema
	// Providers are the model providers [Models] serves; a model step naming
	// any other fails preflight.
	Providers []string
	// Budget bounds the completion. Nil means [DefaultBudget].
	Budget *Budget
	// PlannerAttempts is how many planner answers may be tried; a parse or
	// validation failure is fed back in the next attempt's prompt. Zero
	// means 2.
	PlannerAttempts int
	// PlannerMaxTokens caps each planner call (and model steps without a
	// max_tokens option). Zero means 1024.
	PlannerMaxTokens int
	// Plan, when set, is a trusted plan run instead of asking the planner
	// (a direct turn's [DirectPlan]); it is validated like a planner's and
	// Deps.Planner may be nil.
	Plan *Plan
	// MaxToolRounds bounds the tool rounds of a respond step; the request
	// after the last round offers no tools. Zero means 4.
	MaxToolRounds int
	// ToolResult, when set, is what a respond step's model reads of a
	// tool's result (its text, or its canonical JSON) for the call: a
	// managed turn sends an excerpt of one too large for its ceiling. The
	// output budget is charged what the model reads. Nil means the whole.
	ToolResult func(call tokenizer.ToolCall, text string) string
	// PlannerInstruction is appended to the planner prompt.
	PlannerInstruction string
	// Goal, when set, is what the prompt's Goal line says instead of the
	// Query (input(query) stays the Query): a managed turn's goal refers to
	// the conversation it sends.
	Goal string
	// Compose, when set, builds each root planner call's request from the
	// prompt's parts and the request the completion would send (one user
	// message under the generation cap, with the plan schema as its
	// response format when StructuredOutput): a managed turn puts the packed
	// conversation among the parts and checks the ceiling. An error it
	// returns ends the completion as it is, before anything is sent.
	Compose func(ctx context.Context, parts []PromptPart, base tokenizer.Request) (tokenizer.Request, error)
	// ContextLimits bound every context step. Zero fields mean upstream's
	// context_options defaults: 16 results, 4096 bytes, 1s.
	ContextLimits handle.Limits
	// DepthIsBudget reports a plan nested deeper than the budget as
	// Policy.DepthIsBudget says (plan_run/5: upstream's plan budget).
	DepthIsBudget bool
	// MaxTrajectory bounds the events recorded. Zero means 256.
	MaxTrajectory int
	// StructuredOutput asks every planner call for a plan in the JSON
	// schema of its capabilities ([SchemaFormat], the request's
	// response_format). Set it when the provider constrains sampling with
	// it; the format is part of the request, so it is counted and hashed
	// with it (Compose receives it in the base request).
	StructuredOutput bool
	// SchemaFree: the provider applies that schema as a sampling grammar
	// and shows the model none of it, so a managed turn charges it no
	// prompt tokens (provider.Resolved.SchemaFree).
	SchemaFree bool
	// OnEvent, when set, sees each step start (Status "started") and each
	// trajectory event as it is recorded (a planner call, a finished step).
	// It runs on the goroutine of the step (parallel branches call it
	// concurrently) and must not block.
	OnEvent func(Event)
	// OnExit, when set, is called exactly once just before Complete
	// returns, whatever the outcome, cancellation and time limits included
	// (release handles, unregister tokens here).
	OnExit func(*Outcome, error)
}

// Outcome is a completion's result. On error, Complete still returns the
// Outcome with what is known so far (Usage, Used, Remaining, Trajectory,
// and Plan once one was accepted); Value is then nil.
type Outcome struct {
	Value             any
	Plan              *Plan          // the executed root plan
	Vars              map[string]any // root-scope bindings
	Checkpoints       []string
	ChildCapabilities []Capability
	Recursion         Stats // static facts of the root plan
	ChildCompletions  int   // rlm(query(...)) children run
	PlannerAttempts   int   // root planner answers tried
	Usage             UsageTotals
	Used              Counters
	Remaining         Counters
	Elapsed           time.Duration // wall time of the whole completion
	Trajectory        Trajectory
}

// withDefaults validates in and fills its defaults.
func (in *Input) withDefaults() (Budget, error) {
	b := DefaultBudget()
	if in.Budget != nil {
		b = *in.Budget
	}
	if err := b.Validate(); err != nil {
		return b, err
	}
	if ref := in.Context.Ref; (in.Plan == nil || !in.Context.none()) && (ref.ID == "" || ref.Version < 1) {
		return b, complFault(D("invalid_context", in.Context.Ref.String()), "the completion needs a context handle")
	}
	if in.PlannerAttempts == 0 {
		in.PlannerAttempts = 2
	}
	if in.PlannerAttempts < 0 || in.PlannerAttempts > 16 {
		return b, complFault(D("invalid_positive_integer", Atom("planner_attempts"), int64(in.PlannerAttempts)), "planner_attempts must be 1..16")
	}
	if in.PlannerMaxTokens == 0 {
		in.PlannerMaxTokens = 1024
	}
	if in.PlannerMaxTokens < 0 {
		return b, complFault(D("invalid_positive_integer", Atom("planner_max_tokens"), int64(in.PlannerMaxTokens)), "planner_max_tokens must be > 0")
	}
	if in.MaxToolRounds == 0 {
		in.MaxToolRounds = 4
	}
	if in.MaxToolRounds < 0 || in.MaxToolRounds > 64 {
		return b, complFault(D("invalid_positive_integer", Atom("max_tool_rounds"), int64(in.MaxToolRounds)), "max_tool_rounds must be 1..64")
	}
	if in.MaxTrajectory <= 0 {
		in.MaxTrajectory = 256
	}
	if in.ContextLimits.MaxResults == 0 {
		in.ContextLimits.MaxResults = 16
	}
	if in.ContextLimits.MaxBytes == 0 {
		in.ContextLimits.MaxBytes = 4096
	}
	if in.ContextLimits.TimeLimit == 0 {
		in.ContextLimits.TimeLimit = time.Second
	}
	if in.Capabilities == nil {
		in.Capabilities = []Capability{{Kind: "rlm"}}
		for _, op := range in.Context.Metadata.Operations {
			in.Capabilities = append(in.Capabilities, Capability{Kind: "context", Name: string(op)})
		}
		for _, p := range in.Providers {
			in.Capabilities = append(in.Capabilities, Capability{Kind: "model", Name: p})
		}
	}
	caps, err := normalizeCaps(in.Capabilities)
	if err != nil {
		return b, err
	}
	in.Capabilities = caps
	if in.ChildCapabilities == nil {
		in.ChildCapabilities = caps
	}
	child, err := normalizeCaps(in.ChildCapabilities)
	if err != nil {
		return b, err
	}
	var wider []any
	for _, c := range child {
		if !hasCap(caps, c) {
			wider = append(wider, c.Term())
		}
	}
	if len(wider) > 0 {
		return b, complFault(D("capability_error", Record{Tag: "capability_error", Fields: []Field{
			{Key: "kind", Value: Atom("widening_denied")},
			{Key: "parent", Value: capTerms(caps)},
			{Key: "requested", Value: capTerms(child)},
			{Key: "unauthorized", Value: wider},
		}}), fmt.Sprintf("child capabilities %v are not in the root set", wider))
	}
	in.ChildCapabilities = child
	in.Tools = slices.Clone(in.Tools) // never reorder the caller's slice
	slices.SortFunc(in.Tools, func(a, b ToolSchema) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return b, nil
}

// capTerms are caps as term values (tool(x), never the atom 'tool(x)').
func capTerms(caps []Capability) []any {
	out := make([]any, len(caps))
	for i, c := range caps {
		out[i] = c.Term()
	}
	return out
}

// Complete runs one bounded recursive completion: it asks deps.Planner for
// a plan (the prompt states both plan syntaxes with an example, the goal,
// the context metadata, never the payload, the capabilities, the tool
// schemas and the budget), parses it, retries a parse or validation failure
// up to PlannerAttempts times with the error fed back, validates the whole
// plan before any side effect, executes it, and returns the final value
// with usage, counters and trajectory.
//
// Errors are [*Error] in upstream's catalogue: completion_fault for bad
// input; planner kinds (model_call_budget_exhausted,
// token_budget_exhausted, plan_parse_failed, planner_error); the
// validation kinds (recursive_plan_rejected, invalid_plan,
// capability_denied, budget_exceeded, unknown_provider, unknown_tool);
// execution kinds (budget_exhausted, context_error, model_error,
// tool_error, ...); budget kinds (token_budget_exceeded,
// cost_budget_exceeded); and the control signals [KindCancelled] (ctx
// cancelled; unwraps to context.Canceled) and [KindTimeout] (Budget
// TimeLimit or a ctx deadline; unwraps to context.DeadlineExceeded and, for
// the budget's limit, [ErrTimeLimit]), which win over any step error.
//
// Complete never returns before every goroutine it started for parallel
// branches has finished; a dependency call that ignores ctx is abandoned
// (its result discarded) so that control signals return promptly.
func Complete(ctx context.Context, in Input, deps Deps) (out *Outcome, err error) {
	out = &Outcome{}
	if in.OnExit != nil {
		defer func() { in.OnExit(out, err) }()
	}
	start := time.Now()
	defer func() { out.Elapsed = time.Since(start) }() // before OnExit sees out
	b, err := in.withDefaults()
	if err != nil {
		return out, err
	}
	if deps.Contexts == nil || deps.Planner == nil && in.Plan == nil {
		return out, complFault(D("invalid_dependencies"), "Complete needs Deps.Contexts and Deps.Planner (or Input.Plan)")
	}
	out.ChildCapabilities = in.ChildCapabilities
	r := &run{deps: deps, in: &in, meter: newMeter(b), maxEvents: in.MaxTrajectory, children: map[uint64]bool{}}
	var events []Event
	defer func() {
		out.Usage = r.meter.totals()
		out.Used = r.meter.snapshot()
		out.Remaining = r.meter.remaining()
		r.mu.Lock()
		out.Checkpoints = slices.Clone(r.checkpoints)
		out.ChildCompletions = r.childStats
		r.mu.Unlock()
		for i := range events {
			events[i].Seq = i + 1
		}
		out.Trajectory = Trajectory{Events: events, Dropped: int(r.dropped.Load())}
	}()
	if ctl := control(ctx); ctl != nil {
		return out, ctl // before any side effect
	}
	ctx, cancel := context.WithTimeoutCause(ctx, b.TimeLimit, ErrTimeLimit)
	defer cancel()

	inputs, names := map[string]any{"query": in.Query}, []string{"query"}
	if !in.Context.none() {
		inputs["context"], names = in.Context.Ref, append(names, "context")
	}
	root := &frame{vars: map[string]any{}, depth: 0, reason: "direct_plan_model", events: &events,
		inputs:    inputs,
		caps:      in.Capabilities,
		childCaps: in.ChildCapabilities,
	}
	pd := PromptData{Query: in.Query, Metadata: in.Context.Metadata, Capabilities: in.Capabilities,
		ChildCapabilities: in.ChildCapabilities, Tools: grantedTools(in.Tools, in.Capabilities), Budget: b,
		Instruction: in.PlannerInstruction, Goal: in.Goal}
	// Without a Models or Tools dependency nothing is callable: preflight
	// rejects such steps before any side effect.
	if deps.Models == nil {
		in.Providers = nil
	}
	if deps.Tools == nil {
		in.Tools = nil
	}
	pol := Policy{Capabilities: in.Capabilities, ChildCapabilities: in.ChildCapabilities, Inputs: names, Budget: b,
		Providers: in.Providers, Tools: toolNames(in.Tools), DepthIsBudget: in.DepthIsBudget}
	p, stats, attempts, err := r.rootPlan(ctx, pd, pol, root)
	out.PlannerAttempts = attempts
	if err != nil {
		return out, err
	}
	out.Plan, out.Recursion = p, stats
	root.ancestors = []uint64{fingerprint(p)}
	v, err := r.exec(ctx, p, root)
	if ctl := control(ctx); ctl != nil {
		return out, ctl
	}
	if err != nil {
		return out, err
	}
	out.Value = v
	out.Vars = root.vars
	return out, nil
}

func toolNames(ts []ToolSchema) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// rootPlan is the root plan: Input.Plan, validated, or the planner's.
func (r *run) rootPlan(ctx context.Context, pd PromptData, pol Policy, f *frame) (*Plan, Stats, int, error) {
	if r.in.Plan == nil {
		return r.planLoop(ctx, pd, pol, f)
	}
	stats, err := Validate(r.in.Plan, pol)
	return r.in.Plan, stats, 0, err
}

// planLoop asks the planner until an answer parses and validates, feeding
// each failure back. It returns the plan, its stats and the attempts used.
func (r *run) planLoop(ctx context.Context, pd PromptData, pol Policy, f *frame) (*Plan, Stats, int, error) {
	var last error
	for a := 1; a <= r.in.PlannerAttempts; a++ {
		if ctl := control(ctx); ctl != nil {
			return nil, Stats{}, a - 1, ctl
		}
		limit, err := r.meter.beginCall(r.in.PlannerMaxTokens, true)
		if err != nil {
			return nil, Stats{}, a - 1, err
		}
		req := PlannerRequest{Request: userRequest(RenderPrompt(pd), limit), Attempt: a, Depth: f.depth}
		if r.in.StructuredOutput {
			req.Request.ResponseFormat = SchemaFormat(pol.Capabilities, pol.Providers, pol.Tools, pol.Budget)
		}
		if r.in.Compose != nil && f.depth == 0 {
			if req.Request, err = r.in.Compose(ctx, PromptParts(pd), req.Request); err != nil {
				return nil, Stats{}, a - 1, err
			}
		}
		prompt := promptBytes(&req.Request)
		ev := Event{Op: "planner", Input: fmt.Sprintf("attempt %d, prompt %d bytes", a, prompt)}
		reply, err := guard(ctx, func(ctx context.Context) (PlannerReply, error) { return r.deps.Planner.Plan(ctx, req) })
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				return nil, Stats{}, a, ctl
			}
			e := complErr(PhasePlanner, KindPlannerError, "the planner call failed: "+err.Error())
			e.Cause = err
			r.recordErr(f, ev, e)
			return nil, Stats{}, a, e
		}
		if err := r.meter.endCall(reply.Usage, prompt, limit); err != nil {
			r.recordErr(f, ev, err)
			return nil, Stats{}, a, err
		}
		p := reply.Plan
		if reply.Invalid != nil {
			last = reply.Invalid
			pd.Feedback = feedback(reply.Invalid)
			r.recordErr(f, ev, reply.Invalid)
			continue
		}
		if p == nil {
			p, err = ParseText(reply.Text, r.deps.Terms)
			if err != nil {
				last = err
				pd.Feedback = feedback(err)
				r.recordErr(f, ev, err)
				continue
			}
		}
		pol.Used = r.meter.snapshot()
		pol.Depth = f.depth
		stats, err := Validate(p, pol)
		if err != nil {
			last = err
			pd.Feedback = feedback(err)
			r.recordErr(f, ev, err)
			continue
		}
		ev.Status, ev.Output = "ok", summarize(p.String(), summaryBytes)
		r.record(f, ev)
		return p, stats, a, nil
	}
	var pe *ParseError
	if errors.As(last, &pe) {
		e := complErr(PhasePlanner, KindPlanParseFailed, "no planner answer was a plan: "+pe.Msg,
			Field{"attempts", int64(r.in.PlannerAttempts)})
		e.Cause = pe.AsError()
		return nil, Stats{}, r.in.PlannerAttempts, e
	}
	var e *Error
	if errors.As(last, &e) {
		e.Fields = append(e.Fields, Field{"attempts", int64(r.in.PlannerAttempts)})
		slices.SortStableFunc(e.Fields, func(a, b Field) int {
			if a.Key < b.Key {
				return -1
			}
			if a.Key > b.Key {
				return 1
			}
			return 0
		})
	}
	return nil, Stats{}, r.in.PlannerAttempts, last
}

func (r *run) recordErr(f *frame, ev Event, err error) {
	ev.Status = "error"
	ev.Output = summarize(err.Error(), summaryBytes)
	var e *Error
	var pe *ParseError
	switch {
	case errors.As(err, &e):
		ev.Error = e.Kind
	case errors.As(err, &pe):
		ev.Error = KindInvalidPlan
	}
	r.record(f, ev)
}

// feedback is the text of a failure as the planner reads it next time.
func feedback(err error) string {
	var pe *ParseError
	if errors.As(err, &pe) {
		loc := ""
		if pe.Line > 0 {
			loc = fmt.Sprintf(" (line %d, column %d)", pe.Line, pe.Col)
		}
		return fmt.Sprintf("%s %s error%s: %s", pe.Syntax, pe.Phase, loc, pe.Msg)
	}
	var e *Error
	if errors.As(err, &e) {
		s := fmt.Sprintf("%s error %s: %s", e.Phase, e.Kind, e.Message)
		if e.Detail != nil {
			s += " [" + e.Detail.String() + "]"
		}
		return s
	}
	return err.Error()
}

// childCompletion runs rlm(query(Q[, C]), B): a nested planner call for
// the child goal, with the child capabilities at depth+1, whose plan runs
// in a fresh scope (inputs context and query only) under the shared
// counters.
func (r *run) childCompletion(ctx context.Context, s *RLMStep, f *frame, ev *Event) (any, error) {
	qv, err := r.eval(s.Query, f, nil)
	if err != nil {
		return nil, err
	}
	query, ok := textOf(qv)
	if !ok || query == "" {
		return nil, planErr(PhaseExecute, KindInvalidPrompt, "an rlm query must be non-empty text", Field{"value", summarize(qv, 80)})
	}
	var cexpr Expr = InputRef{Name: "context"}
	if s.Context != nil {
		cexpr = s.Context
	}
	cv, err := r.eval(cexpr, f, nil)
	if err != nil {
		return nil, err
	}
	ref, ok := cv.(handle.Ref)
	if !ok {
		return nil, planErr(PhaseExecute, KindInvalidHandle, "an rlm child's context must be a context handle", Field{"value", summarize(cv, 80)})
	}
	ev.Input = summarize(query, summaryBytes)
	d := f.depth + 1
	if d > r.meter.b.MaxRecursionDepth {
		return nil, rejected(D("recursion_depth_exceeded", int64(d), int64(r.meter.b.MaxRecursionDepth)), "recursion depth exceeded")
	}
	key := childKey(query, ref)
	r.mu.Lock()
	dup := r.children[key]
	r.children[key] = true
	r.childStats++
	r.mu.Unlock()
	if dup {
		return nil, rejected(D("duplicate_recursive_call"), "the same child completion (goal and context) was already run")
	}
	meta := r.in.Context.Metadata
	if ref != r.in.Context.Ref {
		res, err := r.deps.Contexts.Do(ctx, ref, handle.Request{Op: handle.OpPeek, Selector: "metadata"}, r.in.ContextLimits)
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				return nil, ctl
			}
			e := planErr(PhaseExecute, KindContextError, "the child context's metadata is unavailable: "+err.Error())
			e.Cause = err
			return nil, e
		}
		meta, _ = res.Value.(handle.Metadata)
	}
	r.meter.depth(d)
	child := &frame{vars: map[string]any{}, depth: d, reason: "child_completion_model", events: f.events,
		inputs: map[string]any{"context": ref, "query": query}, caps: f.childCaps, childCaps: f.childCaps}
	pd := PromptData{Query: query, Metadata: meta, Capabilities: f.childCaps, ChildCapabilities: f.childCaps,
		Tools: grantedTools(r.in.Tools, f.childCaps), Budget: r.meter.b, Depth: d, Instruction: r.in.PlannerInstruction}
	pol := Policy{Capabilities: f.childCaps, ChildCapabilities: f.childCaps, Budget: r.meter.b,
		Providers: r.in.Providers, Tools: toolNames(r.in.Tools), Ancestors: f.ancestors}
	p, _, _, err := r.planLoop(ctx, pd, pol, child)
	if err != nil {
		return nil, err
	}
	fp := fingerprint(p)
	if slices.Contains(f.ancestors, fp) {
		return nil, rejected(D("recursive_cycle", int64(fp)), "the child planner answered with an enclosing plan")
	}
	child.ancestors = append(slices.Clone(f.ancestors), fp)
	return r.exec(ctx, p, child)
}

// grantedTools keeps the schemas of the tools caps grant.
func grantedTools(ts []ToolSchema, caps []Capability) []ToolSchema {
	var out []ToolSchema
	for _, t := range ts {
		if hasCap(caps, Capability{Kind: "tool", Name: t.Name}) {
			out = append(out, t)
		}
	}
	return out
}
