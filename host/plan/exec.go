package plan

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"

	"github.com/rlmpl/rlmpl/host/handle"
)

// Event is one entry of a completion's trajectory: a plan step, or a
// planner call (Op "planner"). Input and Output are bounded summaries
// (canonical JSON, cut), Counters what the completion had used just after
// it. Events of parallel branches appear in branch order, and nested steps
// before the step that contains them.
type Event struct {
	Seq      int
	Depth    int    // recursion depth of the plan (root 0)
	Op       string // context(search), model(P), tool(N), rlm, parallel, retry, checkpoint, final, planner
	Bind     string
	Status   string // ok or error
	Input    string
	Output   string
	Error    Kind // the error kind when Status is error
	Counters Counters
}

// Trajectory is the bounded record of a completion. Dropped counts events
// left out once the bound was reached.
type Trajectory struct {
	Events  []Event
	Dropped int
}

const summaryBytes = 160

// run is the state of one completion, shared by every plan it runs (root,
// nested, branches, child completions).
type run struct {
	deps  Deps
	in    *Input
	meter *meter

	maxEvents int
	events    atomic.Int64 // events kept so far (across buffers)
	dropped   atomic.Int64

	mu          sync.Mutex // protects the fields below
	checkpoints []string
	children    map[uint64]bool // child completions started (query, context)
	childStats  int             // child completions run
}

// frame is one plan's execution scope.
type frame struct {
	vars   map[string]any
	parent *frame
	inputs map[string]any
	depth  int
	reason string   // model-call reason of this frame's steps
	events *[]Event // where this frame's events go
	// caps of this plan's own steps, and of its children
	caps, childCaps []Capability
	ancestors       []uint64
}

func (f *frame) lookup(name string) (any, bool) {
	for ; f != nil; f = f.parent {
		if v, ok := f.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (r *run) record(f *frame, ev Event) {
	if r.events.Add(1) > int64(r.maxEvents) {
		r.events.Add(-1)
		r.dropped.Add(1)
		return
	}
	ev.Counters = r.meter.snapshot()
	ev.Depth = f.depth
	*f.events = append(*f.events, ev)
	if r.in.OnEvent != nil {
		r.in.OnEvent(ev)
	}
}

// exec runs a validated plan in f and returns its final value.
func (r *run) exec(ctx context.Context, p *Plan, f *frame) (any, error) {
	for _, s := range p.Steps {
		if ctl := control(ctx); ctl != nil {
			return nil, ctl
		}
		ev := Event{Op: opName(s)}
		if r.in.OnEvent != nil {
			r.in.OnEvent(Event{Op: ev.Op, Status: "started", Depth: f.depth})
		}
		v, final, err := r.step(ctx, s, f, &ev)
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				err = ctl // control signals win over whatever the step said
			}
			ev.Status = "error"
			var e *Error
			if errors.As(err, &e) {
				ev.Error = e.Kind
			}
			ev.Output = summarize(err.Error(), summaryBytes)
			r.record(f, ev)
			return nil, err
		}
		ev.Status = "ok"
		ev.Output = summarize(v, summaryBytes)
		r.record(f, ev)
		if final {
			return v, nil
		}
	}
	// Unreachable for a validated plan.
	return nil, invalid(PhaseExecute, D("final_must_be_unique_and_last"), "the plan ended without final")
}

func opName(s Step) string {
	switch s := s.(type) {
	case *ContextStep:
		return "context(" + s.Action.Type + ")"
	case *ModelStep:
		return "model(" + s.Provider + ")"
	case *ToolStep:
		return "tool(" + s.Name + ")"
	case *RespondStep:
		return "respond(" + s.Provider + ")"
	}
	return s.Op()
}

func (r *run) bind(f *frame, name string, v any, ev *Event) {
	f.vars[name] = v
	ev.Bind = name
}

// step runs one step. final reports a final step (v is the plan's value).
func (r *run) step(ctx context.Context, s Step, f *frame, ev *Event) (v any, final bool, err error) {
	switch s := s.(type) {
	case *ContextStep:
		if err := r.meter.step("context_ops"); err != nil {
			return nil, false, err
		}
		hv, err := r.eval(s.Handle, f, nil)
		if err != nil {
			return nil, false, err
		}
		ref, ok := hv.(handle.Ref)
		if !ok {
			return nil, false, planErr(PhaseExecute, KindInvalidHandle, "a context step needs a context handle (such as input(context))", Field{"value", summarize(hv, 80)})
		}
		ev.Input = ref.String() + " " + s.Action.String()
		res, err := r.deps.Contexts.Do(ctx, ref, request(s.Action), r.in.ContextLimits)
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				return nil, false, ctl
			}
			e := planErr(PhaseExecute, KindContextError, "the context operation failed: "+err.Error())
			e.Cause = err
			return nil, false, e
		}
		if err := r.meter.output(Size(res.Value)); err != nil {
			return nil, false, err
		}
		r.bind(f, s.Bind, res.Value, ev)
		return res.Value, false, nil

	case *ModelStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		pv, err := r.eval(s.Prompt, f, nil)
		if err != nil {
			return nil, false, err
		}
		prompt, ok := textOf(pv)
		if !ok {
			return nil, false, planErr(PhaseExecute, KindInvalidPrompt, "a model prompt must be text", Field{"value", summarize(pv, 80)})
		}
		ev.Input = summarize(prompt, summaryBytes)
		if r.deps.Models == nil {
			return nil, false, planErr(PhasePreflight, KindUnknownProvider, "no model dependency is configured", Field{"value", Atom(s.Provider)})
		}
		want := r.in.PlannerMaxTokens
		if n, ok := integer(s.Options["max_tokens"]); ok && n > 0 {
			want = n
		} else if n, ok := integer(s.Options["max_completion_tokens"]); ok && n > 0 {
			want = n
		}
		limit, err := r.meter.beginCall(want, false)
		if err != nil {
			return nil, false, err
		}
		opts := make(map[string]any, len(s.Options)+1)
		for k, x := range s.Options {
			opts[k] = x
		}
		opts["max_tokens"] = int64(limit)
		call := ModelCall{Provider: s.Provider, Request: userRequest(prompt, limit), Options: opts, Depth: f.depth, Reason: f.reason}
		res, err := guard(ctx, func(ctx context.Context) (ModelResult, error) { return r.deps.Models.Complete(ctx, call) })
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				return nil, false, ctl
			}
			e := planErr(PhaseExecute, KindModelError, "the model call failed: "+err.Error(), Field{"provider", Atom(s.Provider)})
			e.Cause = err
			return nil, false, e
		}
		if err := r.meter.endCall(res.Usage, len(prompt), limit); err != nil {
			return nil, false, err
		}
		if err := r.meter.output(Size(res)); err != nil {
			return nil, false, err
		}
		r.bind(f, s.Bind, res, ev)
		return res, false, nil

	case *ToolStep:
		if err := r.meter.step("tool_calls"); err != nil {
			return nil, false, err
		}
		args, err := r.eval(s.Args, f, nil)
		if err != nil {
			return nil, false, err
		}
		ev.Input = summarize(args, summaryBytes)
		if r.deps.Tools == nil {
			return nil, false, planErr(PhasePreflight, KindUnknownTool, "no tool dependency is configured", Field{"value", Atom(s.Name)})
		}
		out, err := guard(ctx, func(ctx context.Context) (any, error) { return r.deps.Tools.Call(ctx, s.Name, args) })
		if err != nil {
			if ctl := control(ctx); ctl != nil {
				return nil, false, ctl
			}
			e := planErr(PhaseExecute, KindToolError, "the tool failed: "+err.Error(), Field{"tool", Atom(s.Name)}, Field{"exception", err.Error()})
			e.Cause = err
			return nil, false, e
		}
		if err := r.meter.output(Size(out)); err != nil {
			return nil, false, err
		}
		r.bind(f, s.Bind, out, ev)
		return out, false, nil

	case *RLMStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		var v any
		if s.Plan != nil {
			child := r.child(f, f, "nested_rlm_model", f.depth+1, f.events)
			child.caps = f.childCaps
			r.meter.depth(child.depth)
			v, err = r.exec(ctx, s.Plan, child)
		} else {
			v, err = r.childCompletion(ctx, s, f, ev)
		}
		if err != nil {
			return nil, false, err
		}
		// The child's result is produced again into this plan's scope, as
		// upstream charges it: a nested plan cannot pass the shared output
		// budget twice over.
		if err := r.meter.output(Size(v)); err != nil {
			return nil, false, err
		}
		r.bind(f, s.Bind, v, ev)
		return v, false, nil

	case *ParallelStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		vals, err := r.parallel(ctx, s, f)
		if err != nil {
			return nil, false, err
		}
		if err := r.meter.output(1 + len(vals)); err != nil { // the list's brackets and commas; the values were charged by their finals
			return nil, false, err
		}
		r.bind(f, s.Bind, vals, ev)
		return vals, false, nil

	case *RetryStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		var last error
		for a := 1; a <= s.Attempts; a++ {
			ev.Input = fmt.Sprintf("attempt %d of %d", a, s.Attempts)
			child := r.child(f, f, "retry_model", f.depth, f.events)
			v, err := r.exec(ctx, s.Plan, child)
			if err == nil {
				r.bind(f, s.Bind, v, ev)
				return v, false, nil
			}
			last = err
			var e *Error
			if ctl := control(ctx); ctl != nil {
				return nil, false, ctl
			}
			if errors.As(err, &e) && (e.Kind == KindBudgetExhausted || e.Phase == PhaseBudget) {
				return nil, false, err // retrying cannot help: counters are never refunded
			}
		}
		return nil, false, last

	case *RespondStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		v, err := r.respond(ctx, s, f, ev)
		return v, false, err

	case *CheckpointStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		r.mu.Lock()
		r.checkpoints = append(r.checkpoints, s.Label)
		r.mu.Unlock()
		ev.Input = s.Label
		return Atom(s.Label), false, nil

	case *FinalStep:
		if err := r.meter.step(""); err != nil {
			return nil, false, err
		}
		var produced int
		v, err := r.eval(s.Value, f, &produced)
		if err != nil {
			return nil, false, err
		}
		if err := r.meter.output(produced); err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	return nil, false, invalid(PhaseExecute, D("unknown_or_malformed_operation", fmt.Sprintf("%T", s)), "unknown step")
}

func (r *run) child(parent, scope *frame, reason string, depth int, events *[]Event) *frame {
	return &frame{vars: map[string]any{}, parent: scope, inputs: parent.inputs, depth: depth, reason: reason,
		events: events, caps: parent.caps, childCaps: parent.childCaps, ancestors: parent.ancestors}
}

func request(a Action) handle.Request {
	q := handle.Request{Op: handle.Op(a.Type)}
	switch a.Type {
	case "peek":
		q.Selector, q.N = a.Selector, a.N
	case "slice":
		q.Start, q.Length = a.Start, a.Length
	case "search":
		q.Pattern = a.Pattern
	case "partition":
		q.Partition, q.N = a.Partition, a.N
	case "map":
		q.Transform = a.Transform
	case "reduce":
		q.Reducer = a.Reducer
	}
	return q
}

// parallel runs the branches concurrently, at most MaxConcurrentSubcalls
// at a time, and returns their finals in branch order. The first failure
// cancels the other branches; the error reported is the failed branch
// with the lowest index (not one cancelled because of it).
func (r *run) parallel(ctx context.Context, s *ParallelStep, f *frame) ([]any, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := len(s.Plans)
	vals := make([]any, n)
	errs := make([]error, n)
	bufs := make([][]Event, n)
	sem := make(chan struct{}, r.meter.b.MaxConcurrentSubcalls)
	var wg sync.WaitGroup
	for i, p := range s.Plans {
		select {
		case sem <- struct{}{}:
		case <-bctx.Done():
			errs[i] = bctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			child := r.child(f, f, "parallel_model", f.depth, &bufs[i])
			vals[i], errs[i] = r.exec(bctx, p, child)
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	for i := range bufs {
		*f.events = append(*f.events, bufs[i]...)
	}
	if ctl := control(ctx); ctl != nil {
		return nil, ctl
	}
	for _, err := range errs {
		if err != nil && !IsControl(err) && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// eval evaluates e in f. When produced is non-nil it adds the canonical
// bytes e newly creates (literals and the structure of lists and objects;
// a var, field or input refers to a value already charged).
func (r *run) eval(e Expr, f *frame, produced *int) (any, error) {
	switch e := e.(type) {
	case Literal:
		if produced != nil {
			*produced += Size(e.Value)
		}
		return e.Value, nil
	case InputRef:
		v, ok := f.inputs[e.Name]
		if !ok {
			return nil, planErr(PhaseExecute, KindMissingInput, "no input "+e.Name, Field{"name", Atom(e.Name)})
		}
		return v, nil
	case VarRef:
		v, ok := f.lookup(e.Name)
		if !ok {
			return nil, invalid(PhaseExecute, D("unbound_variable", Atom(e.Name)), "var("+e.Name+") is unbound")
		}
		return v, nil
	case FieldOf:
		v, err := r.eval(e.Value, f, nil)
		if err != nil {
			return nil, err
		}
		x, ok := fieldOf(v, e.Key)
		if !ok {
			return nil, planErr(PhaseExecute, KindMissingField, fmt.Sprintf("the value has no field %s", e.Key),
				Field{"key", Atom(e.Key)}, Field{"value", summarize(v, 80)})
		}
		return x, nil
	case List:
		out := make([]any, len(e.Elems))
		for i, x := range e.Elems {
			v, err := r.eval(x, f, produced)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		if produced != nil {
			*produced += 1 + len(out)
		}
		return out, nil
	case Object:
		out := make(map[string]any, len(e.Pairs))
		for _, p := range e.Pairs {
			v, err := r.eval(p.Value, f, produced)
			if err != nil {
				return nil, err
			}
			out[p.Key] = v
			if produced != nil {
				*produced += Size(p.Key) + 2 // "key": and a comma or brace
			}
		}
		if produced != nil {
			*produced++
		}
		return out, nil
	}
	return nil, invalid(PhaseExecute, D("invalid_reference", fmt.Sprintf("%T", e)), "unknown expression")
}

// guard runs call and returns as soon as ctx is done, even when the
// dependency ignores ctx (its goroutine then finishes on its own and its
// result is discarded): cancellation and time limits always win.
func guard[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				var zero T
				ch <- result{zero, fmt.Errorf("plan: dependency panicked: %v", p)}
			}
		}()
		v, err := call(ctx)
		ch <- result{v, err}
	}()
	select {
	case res := <-ch:
		return res.v, res.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// childKey identifies a child completion by its goal and context.
func childKey(query string, ref handle.Ref) uint64 {
	h := fnv.New64a()
	h.Write([]byte(query))
	h.Write([]byte{0})
	h.Write([]byte(ref.String()))
	return h.Sum64()
}
