package host

// Completion family: rlm_completion/4 and its direct-call siblings over
// host/plan. lib/rlm_completion.pl wraps them.
//
//	rlm_complete_(+Query, +Context, +Options, -Outcome) is det.
//	llm_query_(+Prompt, +Options, -Outcome) is det.
//	rlm_query_(+Query, +SubContext, +Options, -Outcome) is det.
//	rlm_cancellation_token_(-Token) is det.
//	rlm_cancel_(+Token) is det.
//	default_completion_budget_(-Budget) is det.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// completionOptions is the closed set of options (an unknown one throws
// domain_error(completion_option, O): typos surface instead of being
// ignored as upstream did).
var completionOptions = map[string]bool{
	"planner_handler": true, "model_handler": true, "provider": true, "model": true,
	"capabilities": true, "child_capabilities": true, "tools": true, "context_options": true,
	"planner_attempts": true, "planner_max_tokens": true, "planner_instruction": true,
	"budget": true, "cancel_token": true, "depth": true, "max_tokens": true, "temperature": true,
	"session_id": true, "trace_id": true,
}

// fault is error(completion_error([... kind(completion_fault), detail(D)])).
func fault(detail engine.Term, msg string) engine.Term {
	return atomError.Apply(record("completion_error",
		fld("detail", detail), fld("kind", engine.NewAtom("completion_fault")),
		fld("message", prolog.Chars(msg)), fld("phase", engine.NewAtom("runtime"))))
}

// faultError carries a ready outcome term out of option decoding.
type faultError struct{ term engine.Term }

func (e *faultError) Error() string { return "host: completion fault" }

func faultf(name string, args []engine.Term, format string, a ...any) error {
	var d engine.Term = engine.NewAtom(name)
	if len(args) > 0 {
		d = engine.NewAtom(name).Apply(args...)
	}
	return &faultError{fault(d, fmt.Sprintf(format, a...))}
}

// options reads a Name(Value) option list, first occurrence winning.
func optionMap(c *prolog.Call, t engine.Term, allowed map[string]bool, domain string) (map[string]engine.Term, error) {
	elems, err := c.List(t)
	if err != nil {
		return nil, faultf("invalid_options", []engine.Term{prolog.Resolved(t, c.Env)}, "options must be a proper list")
	}
	out := map[string]engine.Term{}
	for _, e := range elems {
		o, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound || o.Arity() != 1 || !allowed[o.Functor().String()] {
			return nil, prolog.DomainError(domain, prolog.Resolved(e, c.Env))
		}
		if _, dup := out[o.Functor().String()]; !dup {
			out[o.Functor().String()] = c.Resolve(o.Arg(0))
		}
	}
	return out, nil
}

// callbacks serializes calls back into Prolog: plan steps may run in
// parallel goroutines, but the interpreter admits one caller at a time.
type callbacks struct {
	mu sync.Mutex
	c  *prolog.Call
}

// call runs call(H, Arg, Out) once and returns Out resolved. A Prolog
// exception is returned as a handler_exception error; failure as
// handler_failed.
func (cb *callbacks) call(ctx context.Context, h, arg engine.Term) (engine.Term, error) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	out := engine.NewVariable()
	var result engine.Term
	goal := engine.NewAtom("call").Apply(h, arg, out)
	ok, err := engine.Call(cb.c.VM, goal, func(env *engine.Env) *engine.Promise {
		result = prolog.Resolved(out, env)
		return engine.Bool(true)
	}, cb.c.Env).Force(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		var ex engine.Exception
		if errors.As(err, &ex) {
			return nil, &handlerError{kind: "handler_exception", text: cb.c.In.WriteQ(ex.Term(), nil)}
		}
		return nil, err
	}
	if !ok {
		return nil, &handlerError{kind: "handler_failed", text: cb.c.In.WriteQ(h, nil)}
	}
	return result, nil
}

type handlerError struct{ kind, text string }

func (e *handlerError) Error() string { return "host: " + e.kind + ": " + e.text }

// prologPlanner is planner_handler(H): call(H, planner_request([...]), Reply)
// where Reply is a plan term (trusted, converted directly), text to parse,
// ok(Reply) or error(E).
type prologPlanner struct {
	cb *callbacks
	h  engine.Term
}

func (p prologPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	arg := record("planner_request", fld("attempt", engine.Integer(req.Attempt)), fld("depth", engine.Integer(req.Depth)),
		fld("max_tokens", engine.Integer(req.Request.MaxTokens)), fld("messages", messagesTerm(req.Request.Messages)),
		fld("prompt", prolog.Chars(req.Prompt())))
	reply, err := p.cb.call(ctx, p.h, arg)
	if err != nil {
		return plan.PlannerReply{}, err
	}
	reply, err = unwrapOK(reply)
	if err != nil {
		return plan.PlannerReply{}, err
	}
	// reply(X, usage([...])) declares what the call used; without it the
	// budget charges the conservative estimate for unknown usage.
	var usage plan.Usage
	if c, isCompound := reply.(engine.Compound); isCompound && c.Functor().String() == "reply" && c.Arity() == 2 {
		reply, usage = c.Arg(0), usageOf(c.Arg(1))
	}
	if c, isCompound := reply.(engine.Compound); isCompound && c.Functor().String() == "plan" && c.Arity() == 1 {
		pl, err := plan.FromTerm(planterm.Tree(reply, nil))
		if err != nil {
			return plan.PlannerReply{}, err
		}
		return plan.PlannerReply{Plan: pl, Usage: usage}, nil
	}
	text, err := prolog.TextOf(reply, nil)
	if err != nil {
		return plan.PlannerReply{}, &handlerError{kind: "invalid_handler_reply", text: p.cb.c.In.WriteQ(reply, nil)}
	}
	return plan.PlannerReply{Text: text, Usage: usage}, nil
}

// unwrapOK accepts ok(X) and X; error(E) becomes a handler error.
func unwrapOK(t engine.Term) (engine.Term, error) {
	if c, isCompound := t.(engine.Compound); isCompound && c.Arity() == 1 {
		switch c.Functor().String() {
		case "ok":
			return c.Arg(0), nil
		case "error":
			return nil, &handlerError{kind: "handler_error", text: termString(c.Arg(0))}
		}
	}
	return t, nil
}

func termString(t engine.Term) string { return fmt.Sprint(t) }

// prologModels is model_handler(H), used for llm_query/3, rlm_query/4 and
// every model step of a plan (upstream bypassed it inside plans):
// call(H, model_call([...]), Reply) with Reply text or
// model_response([text(T), usage(usage([prompt_tokens(P), ...]))]).
type prologModels struct {
	cb *callbacks
	h  engine.Term
}

func (m prologModels) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	arg := record("model_call", fld("depth", engine.Integer(call.Depth)), fld("max_tokens", engine.Integer(call.Request.MaxTokens)),
		fld("messages", messagesTerm(call.Request.Messages)), fld("prompt", prolog.Chars(call.Prompt())),
		fld("provider", engine.NewAtom(call.Provider)), fld("reason", engine.NewAtom(call.Reason)))
	reply, err := m.cb.call(ctx, m.h, arg)
	if err != nil {
		return plan.ModelResult{}, err
	}
	reply, err = unwrapOK(reply)
	if err != nil {
		return plan.ModelResult{}, err
	}
	if r, isCompound := reply.(engine.Compound); isCompound && r.Functor().String() == "model_response" && r.Arity() == 1 {
		var res plan.ModelResult
		it := engine.ListIterator{List: r.Arg(0)}
		for it.Next() {
			f, isField := it.Current().(engine.Compound)
			if !isField || f.Arity() != 1 {
				continue
			}
			switch f.Functor().String() {
			case "text":
				res.Text, _ = prolog.TextOf(f.Arg(0), nil)
			case "model":
				res.Model, _ = prolog.TextOf(f.Arg(0), nil)
			case "usage":
				res.Usage = usageOf(f.Arg(0))
			}
		}
		return res, nil
	}
	text, err := prolog.TextOf(reply, nil)
	if err != nil {
		return plan.ModelResult{}, &handlerError{kind: "invalid_handler_reply", text: m.cb.c.In.WriteQ(reply, nil)}
	}
	return plan.ModelResult{Text: text}, nil
}

// messagesTerm renders a request's messages for a handler:
// [message([content(Text), role(Role)]), ...], the content as text (an
// image part is left out: handlers see text).
func messagesTerm(ms []tokenizer.Message) engine.Term {
	ts := make([]engine.Term, len(ms))
	for i, m := range ms {
		ts[i] = record("message", fld("content", prolog.Chars(m.Text())), fld("role", engine.NewAtom(m.Role)))
	}
	return engine.List(ts...)
}

// usageOf reads usage([prompt_tokens(P), completion_tokens(C), total_tokens(T), cost(USD)]).
func usageOf(t engine.Term) plan.Usage {
	var u plan.Usage
	r, isCompound := t.(engine.Compound)
	if !isCompound || r.Arity() != 1 {
		return u
	}
	it := engine.ListIterator{List: r.Arg(0)}
	for it.Next() {
		f, isField := it.Current().(engine.Compound)
		if !isField || f.Arity() != 1 {
			continue
		}
		n, isInt := f.Arg(0).(engine.Integer)
		switch f.Functor().String() {
		case "prompt_tokens":
			u.PromptTokens, u.PromptKnown = int(n), isInt
		case "completion_tokens":
			u.CompletionTokens, u.CompletionKnown = int(n), isInt
		case "total_tokens":
			u.TotalTokens, u.TotalKnown = int(n), isInt
		case "cost":
			switch v := f.Arg(0).(type) {
			case engine.Float:
				u.Cost, u.CostKnown = float64(v), true
			case engine.Integer:
				u.Cost, u.CostKnown = float64(v), true
			}
		}
	}
	return u
}

// prologTools are tools([tool(Name, Description, Schema, Handler)]):
// call(Handler, Args, Result).
type prologTools struct {
	cb       *callbacks
	handlers map[string]engine.Term
}

func (t prologTools) Call(ctx context.Context, name string, args any) (any, error) {
	h, ok := t.handlers[name]
	if !ok {
		return nil, fmt.Errorf("host: no tool %q", name)
	}
	at, err := planterm.ToTerm(args)
	if err != nil {
		return nil, err
	}
	res, err := t.cb.call(ctx, h, at)
	if err != nil {
		return nil, err
	}
	return planterm.Value(res, nil)
}

// spec is a decoded completion request.
type spec struct {
	in        plan.Input
	deps      plan.Deps
	token     string
	ephemeral *handle.Ref
	opts      map[string]engine.Term
	cb        *callbacks // the lock every call back into Prolog takes
}

// decode reads the options shared by the completion family.
func (s *Session) decode(c *prolog.Call, options engine.Term) (*spec, error) {
	opts, err := optionMap(c, options, completionOptions, "completion_option")
	if err != nil {
		return nil, err
	}
	sp := &spec{opts: opts}
	cb := &callbacks{c: c}
	sp.cb = cb
	sp.deps.Contexts = s.handles
	sp.deps.Terms = planterm.Reader{}
	model := ""
	if m, present := opts["model"]; present {
		if model, err = prolog.TextOf(m, c.Env); err != nil {
			return nil, faultf("invalid_option", []engine.Term{engine.NewAtom("model").Apply(m)}, "model must be text")
		}
	}
	providerName := "openrouter"
	if p, present := opts["provider"]; present {
		a, isAtom := p.(engine.Atom)
		if !isAtom {
			return nil, faultf("invalid_option", []engine.Term{engine.NewAtom("provider").Apply(p)}, "provider must be a provider name")
		}
		providerName = a.String()
	}
	sp.in.Providers = []string{providerName}
	pm := providerModels{host: s.host, model: model}
	sp.deps.Models = pm
	sp.deps.Planner = providerPlanner{models: pm, provider: providerName}
	if h, present := opts["model_handler"]; present {
		if _, err := c.Callable(h); err != nil {
			return nil, faultf("invalid_callable", []engine.Term{engine.NewAtom("model_handler"), h}, "model_handler must be callable")
		}
		sp.deps.Models = prologModels{cb: cb, h: h}
	}
	if h, present := opts["planner_handler"]; present {
		if _, err := c.Callable(h); err != nil {
			return nil, faultf("invalid_callable", []engine.Term{engine.NewAtom("planner_handler"), h}, "planner_handler must be callable")
		}
		sp.deps.Planner = prologPlanner{cb: cb, h: h}
	}
	capsOf := func(key string) ([]plan.Capability, error) {
		t, present := opts[key]
		if !present {
			return nil, nil
		}
		elems, err := c.List(t)
		if err != nil {
			return nil, faultf("capability_error", []engine.Term{engine.NewAtom("invalid_capabilities")}, "%s must be a list", key)
		}
		caps := []plan.Capability{}
		for _, e := range elems {
			cp, err := plan.ParseCapability(s.in.WriteQ(prolog.Resolved(e, c.Env), nil))
			if err != nil {
				return nil, err
			}
			caps = append(caps, cp)
		}
		return caps, nil
	}
	if sp.in.Capabilities, err = capsOf("capabilities"); err != nil {
		return nil, err
	}
	if sp.in.ChildCapabilities, err = capsOf("child_capabilities"); err != nil {
		return nil, err
	}
	if t, present := opts["tools"]; present {
		elems, err := c.List(t)
		if err != nil {
			return nil, faultf("invalid_tools", []engine.Term{prolog.Resolved(t, c.Env)}, "tools must be a list of tool(Name, Description, Schema, Handler)")
		}
		tools := prologTools{cb: cb, handlers: map[string]engine.Term{}}
		for _, e := range elems {
			tt, isCompound := c.Resolve(e).(engine.Compound)
			if !isCompound || tt.Functor().String() != "tool" || tt.Arity() != 4 {
				return nil, faultf("invalid_tools", []engine.Term{prolog.Resolved(e, c.Env)}, "a tool is tool(Name, Description, Schema, Handler)")
			}
			name, err1 := c.Atom(tt.Arg(0))
			desc, err2 := c.Text(tt.Arg(1))
			schema, err3 := c.Text(tt.Arg(2))
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, faultf("invalid_tools", []engine.Term{prolog.Resolved(e, c.Env)}, "tool name must be an atom, description and schema text")
			}
			tools.handlers[name] = prolog.Resolved(tt.Arg(3), c.Env)
			sp.in.Tools = append(sp.in.Tools, plan.ToolSchema{Name: name, Description: desc, Schema: schema})
		}
		sp.deps.Tools = tools
	}
	if t, present := opts["context_options"]; present {
		lim, _, err := s.limits(c, "context_register/3", t)
		if err != nil {
			var he *handle.Error
			if errors.As(err, &he) || errors.As(err, new(*prolog.ISOError)) {
				return nil, faultf("invalid_context_options", []engine.Term{prolog.Resolved(t, c.Env)}, "%v", err)
			}
			return nil, err
		}
		sp.in.ContextLimits = lim
	}
	posInt := func(key string, dst *int) error {
		t, present := opts[key]
		if !present {
			return nil
		}
		n, isInt := t.(engine.Integer)
		if !isInt || n < 1 || n > math.MaxInt32 {
			return faultf("invalid_positive_integer", []engine.Term{engine.NewAtom(key), prolog.Resolved(t, c.Env)}, "%s must be a positive integer", key)
		}
		*dst = int(n)
		return nil
	}
	if err := errors.Join(posInt("planner_attempts", &sp.in.PlannerAttempts), posInt("planner_max_tokens", &sp.in.PlannerMaxTokens)); err != nil {
		return nil, err
	}
	if t, present := opts["planner_instruction"]; present {
		if sp.in.PlannerInstruction, err = c.Text(t); err != nil {
			return nil, err
		}
	}
	if t, present := opts["budget"]; present {
		b, err := budgetOf(c, t)
		if err != nil {
			return nil, err
		}
		sp.in.Budget = &b
	}
	if t, present := opts["cancel_token"]; present {
		a, isAtom := t.(engine.Atom)
		if !isAtom {
			return nil, faultf("invalid_cancel_token", []engine.Term{prolog.Resolved(t, c.Env)}, "cancel_token must be a token from rlm_cancellation_token/1")
		}
		sp.token = a.String()
	}
	return sp, nil
}

// budgetOf overlays budget([max_model_calls(N), ...]) on the default.
func budgetOf(c *prolog.Call, t engine.Term) (plan.Budget, error) {
	props, err := c.Props(t)
	if err != nil {
		return plan.Budget{}, faultf("invalid_budget", []engine.Term{prolog.Resolved(t, c.Env)}, "budget must be a list of Key(Value)")
	}
	fields := map[string]any{}
	for _, p := range props {
		switch v := c.Resolve(p.Value.(engine.Term)).(type) {
		case engine.Integer:
			fields[p.Key] = int64(v)
		case engine.Float:
			fields[p.Key] = float64(v)
		default:
			x, err := planterm.Value(v, c.Env)
			if err != nil {
				x = plan.Atom(c.In.WriteQ(v, c.Env))
			}
			fields[p.Key] = x
		}
	}
	return plan.DefaultBudget().Overlay(fields)
}

// contextOf resolves the completion's context: a handle, a context_ref
// record, or a source registered now (and deleted when the call ends).
func (s *Session) contextOf(c *prolog.Call, t engine.Term, sp *spec) (plan.ContextRef, error) {
	h := c.Resolve(t)
	if r, isCompound := h.(engine.Compound); isCompound && r.Functor().String() == "context_ref" && r.Arity() == 1 {
		f, err := fieldsOf(c, r.Arg(0))
		if err == nil && f["handle"] != nil {
			h = f["handle"]
		}
	}
	if ref, err := handleArg(c, h); err == nil {
		meta, err := s.handles.Metadata(ref)
		if err != nil {
			return plan.ContextRef{}, faultf("context_metadata_failed", []engine.Term{atomError.Apply(contextReason(asHandleError(err)))}, "%v", err)
		}
		return plan.ContextRef{Ref: ref, Metadata: meta}, nil
	}
	ref, meta, err := s.registerSource(c, h, handle.Limits{})
	if err != nil {
		return plan.ContextRef{}, faultf("context_registration_failed", []engine.Term{atomError.Apply(contextReason(asHandleError(err)))}, "%v", err)
	}
	sp.ephemeral = &ref
	return plan.ContextRef{Ref: ref, Metadata: meta}, nil
}

func asHandleError(err error) *handle.Error {
	var he *handle.Error
	if errors.As(err, &he) {
		return he
	}
	return &handle.Error{Kind: "internal", Message: err.Error()}
}

// outcomeErr renders a completion failure as an outcome, or returns the Go
// error to throw (ISO errors, engine exceptions).
func (s *Session) outcomeErr(c *prolog.Call, out engine.Term, err error, sp *spec) (bool, error) {
	var fe *faultError
	var pe *plan.Error
	var he *handlerError
	switch {
	case errors.As(err, &fe):
		return c.Unify(out, fe.term), nil
	case errors.As(err, &pe):
		rec := pe.Record()
		if sp != nil && sp.token != "" && pe.Kind == plan.KindCancelled {
			rec.Fields = append(rec.Fields, plan.Field{Key: "token", Value: plan.Atom(sp.token)})
			slices.SortStableFunc(rec.Fields, func(a, b plan.Field) int { return strings.Compare(a.Key, b.Key) })
		}
		t, terr := planterm.ToTerm(rec)
		if terr != nil {
			return false, terr
		}
		return c.Unify(out, atomError.Apply(t)), nil
	case errors.As(err, &he):
		return c.Unify(out, atomError.Apply(record("completion_error",
			fld("exception", prolog.Chars(he.text)), fld("kind", engine.NewAtom(he.kind)),
			fld("message", prolog.Chars(he.Error())), fld("phase", engine.NewAtom("handler"))))), nil
	case errors.As(err, new(*prolog.ISOError)), errors.As(err, new(engine.Exception)):
		return false, err
	}
	return c.Unify(out, atomError.Apply(record("completion_error",
		fld("exception", prolog.Chars(err.Error())), fld("kind", engine.NewAtom("exception")),
		fld("message", prolog.Chars(err.Error())), fld("phase", engine.NewAtom("runtime"))))), nil
}

func (s *Session) rlmComplete(c *prolog.Call, query, context_, options, out engine.Term) (bool, error) {
	sp, err := s.decode(c, options)
	if err != nil {
		return s.outcomeErr(c, out, err, nil)
	}
	q, err := prolog.TextOf(query, c.Env)
	if err != nil {
		return s.outcomeErr(c, out, faultf("expected_text", []engine.Term{prolog.Resolved(query, c.Env)}, "the query must be text"), sp)
	}
	sp.in.Query = q
	cref, err := s.contextOf(c, context_, sp)
	if err != nil {
		return s.outcomeErr(c, out, err, sp)
	}
	sp.in.Context = cref
	ctx, done := s.tokens.watch(c.Ctx, sp.token)
	defer done()
	sp.in.OnExit = func(*plan.Outcome, error) {
		if sp.ephemeral != nil {
			_ = s.handles.Delete(*sp.ephemeral)
		}
	}
	res, err := plan.Complete(ctx, sp.in, sp.deps)
	if c.Ctx.Err() != nil {
		return false, c.Ctx.Err() // the query itself was cancelled: stop, do not report
	}
	if err != nil {
		return s.outcomeErr(c, out, err, sp)
	}
	value, err := planterm.ToTerm(res.Value)
	if err != nil {
		return false, err
	}
	caps := make([]engine.Term, len(res.ChildCapabilities))
	for i, cp := range res.ChildCapabilities {
		caps[i] = engine.NewAtom(cp.String())
		if t, err := prolog.ReadTerm(cp.String(), prolog.ReadLimits{}); err == nil {
			caps[i] = t
		}
	}
	checkpoints := make([]engine.Term, len(res.Checkpoints))
	for i, cp := range res.Checkpoints {
		checkpoints[i] = engine.NewAtom(cp)
	}
	return c.Unify(out, ok(record("completion_result",
		fld("checkpoints", engine.List(checkpoints...)),
		fld("child_capabilities", engine.List(caps...)),
		fld("plan", prolog.Chars(res.Plan.String())),
		fld("planner_attempts", engine.Integer(res.PlannerAttempts)),
		fld("remaining", countersTerm(res.Remaining)),
		fld("trajectory", trajectoryTerm(res.Trajectory)),
		fld("usage", usageTerm(res.Usage)),
		fld("used", countersTerm(res.Used)),
		fld("value", value),
	))), nil
}

func countersTerm(k plan.Counters) engine.Term {
	return record("counters",
		fld("context_ops", engine.Integer(k.ContextOps)), fld("cost_usd", engine.Float(k.CostUSD)),
		fld("depth", engine.Integer(k.Depth)), fld("model_calls", engine.Integer(k.ModelCalls)),
		fld("output_bytes", engine.Integer(k.OutputBytes)), fld("steps", engine.Integer(k.Steps)),
		fld("tokens", engine.Integer(k.Tokens)), fld("tool_calls", engine.Integer(k.ToolCalls)))
}

func usageTerm(u plan.UsageTotals) engine.Term {
	return record("usage_summary",
		fld("completion_tokens", engine.Integer(u.CompletionTokens)), fld("cost_known", boolTerm(u.CostKnown)),
		fld("cost_usd", engine.Float(u.CostUSD)), fld("estimated_tokens", engine.Integer(u.EstimatedTokens)),
		fld("model_calls", engine.Integer(u.ModelCalls)), fld("prompt_tokens", engine.Integer(u.PromptTokens)),
		fld("tokens_known", boolTerm(u.TokensKnown)), fld("total_tokens", engine.Integer(u.TotalTokens)))
}

func trajectoryTerm(t plan.Trajectory) engine.Term {
	evs := make([]engine.Term, len(t.Events))
	for i, e := range t.Events {
		fs := []prolog.Field{
			fld("depth", engine.Integer(e.Depth)), fld("input", prolog.Chars(e.Input)),
			fld("op", prolog.Chars(e.Op)), fld("output", prolog.Chars(e.Output)),
			fld("seq", engine.Integer(e.Seq)), fld("status", engine.NewAtom(e.Status)),
		}
		if e.Bind != "" {
			fs = append(fs, fld("bind", engine.NewAtom(e.Bind)))
		}
		if e.Error != "" {
			fs = append(fs, fld("error", engine.NewAtom(string(e.Error))))
		}
		evs[i] = record("event", fs...)
	}
	return record("trajectory", fld("dropped", engine.Integer(t.Dropped)), fld("events", engine.List(evs...)))
}

// queryCall runs llm_query/3 (depth 0) and rlm_query/4 (prompt from the
// sub-context's metadata, depth from depth(N), default 1).
func (s *Session) queryCall(c *prolog.Call, prompt string, sp *spec, depth int, out engine.Term, tag string) (bool, error) {
	qi := plan.QueryInput{Prompt: prompt, Provider: sp.in.Providers[0], Budget: sp.in.Budget, Depth: depth}
	if t, present := sp.opts["max_tokens"]; present {
		if n, isInt := t.(engine.Integer); isInt && n > 0 && n <= math.MaxInt32 {
			qi.MaxTokens = int(n)
		} else {
			return s.outcomeErr(c, out, faultf("invalid_positive_integer", []engine.Term{engine.NewAtom("max_tokens"), t}, "max_tokens must be a positive integer"), sp)
		}
	} else if sp.in.PlannerMaxTokens > 0 {
		qi.MaxTokens = sp.in.PlannerMaxTokens
	}
	if t, present := sp.opts["temperature"]; present {
		f, err := c.Number(t)
		if err != nil {
			return s.outcomeErr(c, out, faultf("invalid_option", []engine.Term{engine.NewAtom("temperature").Apply(t)}, "temperature must be a number"), sp)
		}
		qi.Options = map[string]any{"temperature": f}
	}
	ctx, done := s.tokens.watch(c.Ctx, sp.token)
	defer done()
	res, err := plan.Query(ctx, qi, sp.deps.Models)
	if c.Ctx.Err() != nil {
		return false, c.Ctx.Err()
	}
	if err != nil {
		return s.outcomeErr(c, out, err, sp)
	}
	fs := []prolog.Field{
		fld("elapsed_ms", engine.Float(float64(res.Elapsed.Microseconds())/1000)),
		fld("response", record("model_response", fld("model", prolog.Chars(res.Response.Model)),
			fld("reasoning", prolog.Chars(res.Response.Reasoning)), fld("text", prolog.Chars(res.Response.Text)))),
		fld("usage", usageTerm(res.Usage)),
	}
	if tag == "rlm_query_result" {
		fs = append(fs, fld("depth", engine.Integer(depth)))
	}
	return c.Unify(out, ok(record(tag, fs...))), nil
}

func (s *Session) llmQuery(c *prolog.Call, prompt, options, out engine.Term) (bool, error) {
	sp, err := s.decode(c, options)
	if err != nil {
		return s.outcomeErr(c, out, err, nil)
	}
	p, err := prolog.TextOf(prompt, c.Env)
	if err != nil {
		return s.outcomeErr(c, out, faultf("expected_text", []engine.Term{prolog.Resolved(prompt, c.Env)}, "the prompt must be text"), sp)
	}
	return s.queryCall(c, p, sp, 0, out, "llm_result")
}

func (s *Session) rlmQuery(c *prolog.Call, query, sub, options, out engine.Term) (bool, error) {
	sp, err := s.decode(c, options)
	if err != nil {
		return s.outcomeErr(c, out, err, nil)
	}
	q, err := prolog.TextOf(query, c.Env)
	if err != nil {
		return s.outcomeErr(c, out, faultf("expected_text", []engine.Term{prolog.Resolved(query, c.Env)}, "the query must be text"), sp)
	}
	cref, err := s.contextOf(c, sub, sp)
	if err != nil {
		return s.outcomeErr(c, out, err, sp)
	}
	if sp.ephemeral != nil {
		defer s.handles.Delete(*sp.ephemeral)
	}
	depth := 1
	if t, present := sp.opts["depth"]; present {
		n, isInt := t.(engine.Integer)
		if !isInt || n < 0 || n > math.MaxInt32 {
			return s.outcomeErr(c, out, faultf("invalid_nonnegative_integer", []engine.Term{engine.NewAtom("depth"), t}, "depth must be a non-negative integer"), sp)
		}
		depth = int(n)
	}
	return s.queryCall(c, plan.RLMQueryPrompt(q, depth, cref.Metadata), sp, depth, out, "rlm_query_result")
}

func (s *Session) cancellationToken(c *prolog.Call, t engine.Term) (bool, error) {
	return c.Unify(t, engine.NewAtom(s.tokens.create())), nil
}

func (s *Session) cancel(c *prolog.Call, t engine.Term) (bool, error) {
	id, err := c.Atom(t)
	if err != nil {
		return false, err
	}
	s.tokens.cancel(id)
	return true, nil
}

func (s *Session) defaultBudget(c *prolog.Call, t engine.Term) (bool, error) {
	b := plan.DefaultBudget()
	return c.Unify(t, record("completion_budget",
		fld("max_concurrent_subcalls", engine.Integer(b.MaxConcurrentSubcalls)),
		fld("max_context_ops", engine.Integer(b.MaxContextOps)),
		fld("max_cost_usd", engine.Float(b.MaxCostUSD)),
		fld("max_iterations", engine.Integer(b.MaxIterations)),
		fld("max_model_calls", engine.Integer(b.MaxModelCalls)),
		fld("max_output_bytes", engine.Integer(b.MaxOutputBytes)),
		fld("max_recursion_depth", engine.Integer(b.MaxRecursionDepth)),
		fld("max_tool_calls", engine.Integer(b.MaxToolCalls)),
		fld("max_total_tokens", engine.Integer(b.MaxTotalTokens)),
		fld("time_limit", engine.Float(b.TimeLimit.Seconds())),
		fld("unknown_call_cost_usd", engine.Float(b.UnknownCallCostUSD)),
	)), nil
}
