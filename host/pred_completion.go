package host

// Completion family: rlm_completion/4 and its direct-call siblings over
// host/plan, with providers resolved per call (completion.go). Options are
// checked against lib's rlm_option/4 rows (throwing ISO errors naming the
// predicate); what depends on state or data (provider and configuration
// errors, plan errors, budgets, cancellation) is an error(Reason) outcome
// from the one table in errors.go.
//
//	rlm_completion(+Query, +Context, +Options, -Outcome) is det.
//	llm_query(+Prompt, +Options, -Outcome) is det.
//	rlm_query(+Query, +SubContext, +Options, -Outcome) is det.
//	rlm_cancellation_token(-Token) is det.
//	rlm_cancel(+Token) is det.
//	default_completion_budget(-Budget) is det.
//	openai_compatible_provider(+Endpoint, +Credential, +Model, -Provider) is det.
//	openrouter_provider(?Model, -Provider) is det.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// faultError is a completion_fault outcome decided here rather than in
// host/plan: a context that cannot be registered or read.
type faultError struct {
	detail engine.Term
	msg    string
}

func (e *faultError) Error() string { return "host: completion fault: " + e.msg }

// prologPlanner is planner_handler(H): call(H, planner_request([...]), Reply)
// where Reply is a plan term (trusted, converted directly), text to parse,
// planner_output([plan(P), usage(U)]) (upstream's reply), reply(P, usage(U)),
// ok(Reply) or error(E).
type prologPlanner struct {
	cb *callbacks
	h  engine.Term
}

func (p prologPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	arg := record("planner_request", fld("attempt", engine.Integer(req.Attempt)), fld("depth", engine.Integer(req.Depth)),
		fld("max_tokens", engine.Integer(req.Request.MaxTokens)), fld("messages", messagesTerm(req.Request.Messages)),
		fld("prompt", prolog.Chars(req.Prompt())))
	var out plan.PlannerReply
	err := p.cb.call(ctx, p.h, arg, func(c *prolog.Call, reply engine.Term) (err error) {
		out, err = plannerReplyOf(c, reply)
		return err
	})
	return out, err
}

// plannerReplyOf reads a planner handler's reply.
func plannerReplyOf(c *prolog.Call, reply engine.Term) (plan.PlannerReply, error) {
	reply, err := unwrapOK(reply)
	if err != nil {
		return plan.PlannerReply{}, err
	}
	// reply(X, usage([...])) and planner_output([plan(X), usage([...])])
	// declare what the call used; without either the budget charges the
	// conservative estimate for unknown usage.
	var usage plan.Usage
	if r, isCompound := reply.(engine.Compound); isCompound {
		switch {
		case r.Functor().String() == "reply" && r.Arity() == 2:
			reply, usage = r.Arg(0), usageOf(r.Arg(1), false)
		case r.Functor().String() == "planner_output" && r.Arity() == 1:
			f, err := fieldsOf(c, r.Arg(0))
			if err != nil || f["plan"] == nil {
				return plan.PlannerReply{}, &handlerError{kind: "invalid_handler_reply", text: c.In.Describe(reply, nil)}
			}
			// Upstream's reading: a declared usage's missing counts are 0.
			reply, usage = f["plan"], usageOf(f["usage"], true)
		}
	}
	if r, isCompound := reply.(engine.Compound); isCompound && r.Arity() == 1 {
		switch r.Functor().String() {
		case "plan":
			out := plannerPlan(reply)
			out.Usage = usage
			return out, nil
		case "model_response": // upstream's reply of a real model: its text is the plan
			res, err := modelReplyOf(c, reply)
			return plan.PlannerReply{Text: res.Text, Usage: res.Usage, Model: res.Model}, err
		}
	}
	text, err := prolog.TextOf(reply, nil)
	if err != nil {
		return plan.PlannerReply{}, &handlerError{kind: "invalid_handler_reply", text: c.In.Describe(reply, nil)}
	}
	return plan.PlannerReply{Text: text, Usage: usage}, nil
}

// plannerPlan converts a planner_handler's plan term. Upstream's recursive
// check comes first there, so a cyclic plan (recursive_cycle(cyclic_term))
// and a plan with a variable (non_ground_recursive_plan) are
// recursive_plan_rejected in phase validate, as plan_parse/2 rejects a
// cyclic one; another shape error is the parser's. Either is the reply's
// Invalid: fed back to the planner and retried like unparsable text.
func plannerPlan(t engine.Term) plan.PlannerReply {
	if !prolog.Acyclic(t, nil) {
		return plan.PlannerReply{Invalid: cyclicPlanErr()}
	}
	p, err := plan.FromTerm(planterm.Tree(t, nil))
	var pe *plan.ParseError
	if errors.As(err, &pe) && pe.Detail.String() == "non_ground_recursive_plan" {
		return plan.PlannerReply{Invalid: recursivePlanErr(pe.Detail, "the plan contains a variable")}
	}
	if err != nil {
		return plan.PlannerReply{Invalid: err}
	}
	return plan.PlannerReply{Plan: p}
}

// unwrapOK accepts ok(X) and X; error(E) becomes a handler error.
func unwrapOK(t engine.Term) (engine.Term, error) {
	if c, isCompound := t.(engine.Compound); isCompound && c.Arity() == 1 {
		switch c.Functor().String() {
		case "ok":
			return c.Arg(0), nil
		case "error":
			return nil, &handlerError{kind: "handler_error", text: fmt.Sprint(c.Arg(0))}
		}
	}
	return t, nil
}

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
	var out plan.ModelResult
	err := m.cb.call(ctx, m.h, arg, func(c *prolog.Call, reply engine.Term) (err error) {
		out, err = modelReplyOf(c, reply)
		return err
	})
	return out, err
}

// modelReplyOf reads a model handler's reply.
func modelReplyOf(c *prolog.Call, reply engine.Term) (plan.ModelResult, error) {
	reply, err := unwrapOK(reply)
	if err != nil {
		return plan.ModelResult{}, err
	}
	if r, isCompound := reply.(engine.Compound); isCompound && r.Functor().String() == "model_response" && r.Arity() == 1 {
		var res plan.ModelResult
		f, _ := fieldsOf(c, r.Arg(0))
		res.Text, _ = prolog.TextOf(f["text"], nil)
		res.Model, _ = prolog.TextOf(f["model"], nil)
		res.Usage = usageOf(f["usage"], false)
		return res, nil
	}
	text, err := prolog.TextOf(reply, nil)
	if err != nil {
		return plan.ModelResult{}, &handlerError{kind: "invalid_handler_reply", text: c.In.Describe(reply, nil)}
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

// usageOf reads usage([prompt_tokens(P), completion_tokens(C),
// total_tokens(T), cost(USD)]) or the bare list. With zeroMissing, absent
// counts are known zeros (upstream's planner_output); otherwise unknown.
func usageOf(t engine.Term, zeroMissing bool) plan.Usage {
	var u plan.Usage
	if zeroMissing {
		u = plan.Usage{PromptKnown: true, CompletionKnown: true, TotalKnown: true, CostKnown: true}
	}
	if r, isCompound := t.(engine.Compound); isCompound && r.Arity() == 1 && r.Functor().String() != "." {
		t = r.Arg(0)
	}
	if t == nil {
		return u
	}
	it := engine.ListIterator{List: t}
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
	if zeroMissing && u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
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
	var out any
	err = t.cb.call(ctx, h, at, func(_ *prolog.Call, res engine.Term) (err error) {
		out, err = planterm.Value(res, nil)
		return err
	})
	return out, err
}

// spec is a decoded completion call.
type spec struct {
	in        plan.Input
	deps      plan.Deps
	op        opts
	token     string
	ephemeral *handle.Ref
	cb        *callbacks // the lock every call back into Prolog takes
}

// decode checks the options of pred against lib's schema (throwing ISO
// errors) and reads the parts shared by the family: handlers, the provider,
// the budget and the cancellation token. A provider that does not resolve
// fails the first call that needs it, with its *provider.ConfigError.
func (s *Session) decode(c *prolog.Call, pred string, options engine.Term) (*spec, error) {
	op, err := s.options(c, pred, options)
	if err != nil {
		return nil, err
	}
	sp := &spec{op: op, cb: &callbacks{c: c}}
	sp.deps.Contexts = s.handles
	sp.deps.Terms = planterm.Reader{}
	if op.has("model_handler") {
		sp.deps.Models = prologModels{cb: sp.cb, h: op["model_handler"]}
	}
	if op.has("planner_handler") {
		sp.deps.Planner = prologPlanner{cb: sp.cb, h: op["planner_handler"]}
	}
	if op.has("budget") && pred != "plan_run/5" { // plan_run/5 reads upstream's plan budget
		b, err := budgetOf(c, optionList(c, op["budget"], "completion_budget"))
		if err != nil {
			return nil, err
		}
		sp.in.Budget = &b
	}
	sp.token = op.atom("cancel_token")
	// The provider: the models' and the planner's unless handlers answer
	// both. Its name is what model steps and capabilities say.
	name, call, err := s.providerOption(c, op)
	if err != nil {
		return nil, err
	}
	needPlanner := pred == "rlm_completion/4" && sp.deps.Planner == nil
	if !needPlanner && sp.deps.Models != nil {
		if name == "" {
			name = s.defaultName(c)
		}
		sp.in.Providers = []string{name}
		return sp, nil
	}
	r, err := s.resolveProvider(c, name, call)
	if err != nil {
		// The configuration error is the outcome of the first call that
		// needs the provider, if any (a planner handler's plan may need no
		// model; a turn checks its message first).
		if name == "" {
			name = s.defaultName(c)
		}
		sp.in.Providers = []string{name}
		if sp.deps.Models == nil {
			sp.deps.Models = unresolved{err}
		}
		if needPlanner {
			sp.deps.Planner = unresolved{err}
		}
		return sp, nil
	}
	sp.in.Providers = []string{r.Name}
	pm := providerModels{r: r}
	if op.has("on_delta") {
		pm.onDelta = s.deltaHandler(c, sp.cb, op["on_delta"])
	}
	if sp.deps.Models == nil {
		sp.deps.Models = pm
	}
	if needPlanner {
		sp.deps.Planner = providerPlanner{models: pm}
		sp.in.StructuredOutput, sp.in.SchemaFree = r.StructuredOutput, r.SchemaFree
	}
	return sp, nil
}

// unresolved answers every model and planner call with the configuration
// error that kept its provider from resolving.
type unresolved struct{ err error }

func (u unresolved) Complete(context.Context, plan.ModelCall) (plan.ModelResult, error) {
	return plan.ModelResult{}, u.err
}

func (u unresolved) Plan(context.Context, plan.PlannerRequest) (plan.PlannerReply, error) {
	return plan.PlannerReply{}, u.err
}

// providerOption reads provider(Name) or provider(provider(Name, Settings))
// and model(M) into the call's layer. Name is "" when the call names none.
func (s *Session) providerOption(c *prolog.Call, op opts) (string, provider.Settings, error) {
	var call provider.Settings
	name := ""
	switch t := op["provider"].(type) {
	case engine.Atom:
		name = t.String()
	case engine.Compound: // provider(Name, Settings), checked by the option type
		name = t.Arg(0).(engine.Atom).String()
		var err error
		if call, err = s.providerSettings(c, name, t.Arg(1)); err != nil {
			return "", call, err
		}
	}
	if op.has("model") {
		call.Model = op.text("model")
	}
	return name, call, nil
}

// providerSettings reads the settings of a provider term. Types were
// checked against provider/2's schema; what is left is what only the
// configuration can judge: a credential that is not env(V) or none is a
// configuration error, and the value is never echoed (it is often a key).
func (s *Session) providerSettings(c *prolog.Call, name string, list engine.Term) (provider.Settings, error) {
	op, err := s.options(c, "provider/2", list)
	if err != nil {
		return provider.Settings{}, err
	}
	st := provider.Settings{Model: op.text("model"), BaseURL: op.text("base_url")}
	if op.has("endpoint") {
		if st.BaseURL != "" {
			return st, &provider.ConfigError{Provider: name, Field: "endpoint", Message: "give base_url or endpoint, not both"}
		}
		st.BaseURL = op.text("endpoint")
	}
	if op.has("timeout") {
		st.Timeout = time.Duration(min(op.number("timeout"), 86400) * float64(time.Second))
	}
	if op.has("structured_output") {
		st.StructuredOutput = new(op.bool("structured_output"))
	}
	if op.has("api") {
		st.API = op.atom("api")
	}
	st.CacheTTL = op.text("cache_ttl")
	if st.Headers, err = textPairs(c, op, "headers"); err != nil {
		return st, err
	}
	if op.has("credential") {
		cred, ok := credentialOf(c, op["credential"])
		if !ok {
			return st, &provider.ConfigError{Provider: name, Field: "credential", Message: "a credential is env(VARIABLE) or none; keys are read from the environment, never written in configuration (the value given is not shown)"}
		}
		st.Credential, st.NoCredential = cred, cred == ""
	}
	return st, nil
}

// credentialOf reads none ("") or env(Name); ok is false for anything else.
func credentialOf(c *prolog.Call, t engine.Term) (string, bool) {
	switch v := c.Resolve(t).(type) {
	case engine.Atom:
		return "", v.String() == "none"
	case engine.Compound:
		if v.Functor().String() == "env" && v.Arity() == 1 {
			name, err := c.Text(v.Arg(0))
			return name, err == nil && name != ""
		}
	}
	return "", false
}

// resolveProvider resolves name (or the default when it is "") for a
// Prolog call: the default follows the configuration file, then lib's
// default_provider/1 as the program has it.
func (s *Session) resolveProvider(c *prolog.Call, name string, call provider.Settings) (Resolved, error) {
	h := s.host
	if name == "" {
		var err error
		if name, err = provider.DefaultName(h.opts.ProviderConfig, s.defaultNames(c), h.opts.Getenv); err != nil {
			return Resolved{}, err
		}
	}
	return h.resolve(name, call)
}

// defaultNames are lib's default_provider/1 facts, in order.
func (s *Session) defaultNames(c *prolog.Call) []string {
	var names []string
	n := engine.NewVariable()
	_ = callAll(c, engine.NewAtom("default_provider").Apply(n), func(env *engine.Env) {
		if a, isAtom := env.Resolve(n).(engine.Atom); isAtom {
			names = append(names, a.String())
		}
	})
	return names
}

// defaultName names the provider of a call whose handlers answer every
// model call: the configured default, else lib's first, without asking for
// a key.
func (s *Session) defaultName(c *prolog.Call) string {
	if cfg := s.host.opts.ProviderConfig; cfg != nil && cfg.Default != "" {
		return cfg.Default
	}
	if names := s.defaultNames(c); len(names) > 0 {
		return names[0]
	}
	return "default"
}

// deltaHandler is on_delta(Closure): call(Closure, Delta) for each
// streamed delta, Delta one of text(T), reasoning(T), tool_call(Index, Id,
// Name, Arguments), finish(Reason) and usage(U). A closure that fails or
// throws stops the stream.
func (s *Session) deltaHandler(c *prolog.Call, cb *callbacks, closure engine.Term) func(provider.Delta) error {
	return func(d provider.Delta) error {
		var t engine.Term
		switch d.Kind {
		case provider.DeltaText, provider.DeltaReasoning:
			t = engine.NewAtom(d.Kind.String()).Apply(prolog.Chars(d.Text))
		case provider.DeltaToolCall:
			tc := d.ToolCall
			t = engine.NewAtom("tool_call").Apply(engine.Integer(tc.Index), prolog.Chars(tc.ID), prolog.Chars(tc.Name), prolog.Chars(tc.Arguments))
		case provider.DeltaFinish:
			t = engine.NewAtom("finish").Apply(engine.NewAtom(d.FinishReason))
		case provider.DeltaUsage:
			t = engine.NewAtom("usage").Apply(providerUsageTerm(*d.Usage))
		default:
			return nil
		}
		return cb.run(c.Ctx, engine.NewAtom("call").Apply(closure, t), closure, nil)
	}
}

// providerUsageTerm is usage([...]) with the fields the provider reported.
func providerUsageTerm(u provider.Usage) engine.Term {
	var fs []prolog.Field
	if u.PromptKnown {
		fs = append(fs, fld("prompt_tokens", engine.Integer(u.PromptTokens)))
	}
	if u.CompletionKnown {
		fs = append(fs, fld("completion_tokens", engine.Integer(u.CompletionTokens)))
	}
	if u.TotalKnown {
		fs = append(fs, fld("total_tokens", engine.Integer(u.TotalTokens)))
	}
	if u.CostKnown {
		fs = append(fs, fld("cost", engine.Float(u.Cost)))
	}
	return record("usage", fs...)
}

// decodeCompletion adds what only rlm_completion/4 takes: capabilities,
// tools, context limits and the planner's options.
func (s *Session) decodeCompletion(c *prolog.Call, sp *spec) error {
	op := sp.op
	capsOf := func(key string) ([]plan.Capability, error) {
		if !op.has(key) {
			return nil, nil
		}
		elems, _ := c.List(op[key])
		caps := []plan.Capability{}
		for _, e := range elems {
			cp, err := plan.ParseCapability(s.capabilityText(c, e))
			if err != nil {
				return nil, err
			}
			caps = append(caps, cp)
		}
		return caps, nil
	}
	var err error
	if sp.in.Capabilities, err = capsOf("capabilities"); err != nil {
		return err
	}
	if sp.in.ChildCapabilities, err = capsOf("child_capabilities"); err != nil {
		return err
	}
	if op.has("tools") {
		elems, _ := c.List(op["tools"])
		tools := prologTools{cb: sp.cb, handlers: map[string]engine.Term{}}
		for _, e := range elems {
			tt, isCompound := c.Resolve(e).(engine.Compound)
			if !isCompound || tt.Functor().String() != "tool" || tt.Arity() != 4 {
				return prolog.TypeError("tool", prolog.Resolved(e, c.Env))
			}
			name, err := c.Atom(tt.Arg(0))
			if err != nil {
				return err
			}
			desc, err := c.Text(tt.Arg(1))
			if err != nil {
				return err
			}
			schema, err := c.Text(tt.Arg(2))
			if err != nil {
				return err
			}
			if _, err := c.Callable(tt.Arg(3)); err != nil {
				return err
			}
			tools.handlers[name] = prolog.Resolved(tt.Arg(3), c.Env)
			sp.in.Tools = append(sp.in.Tools, plan.ToolSchema{Name: name, Description: desc, Schema: schema})
		}
		sp.deps.Tools = tools
	}
	if op.has("context_options") {
		lim, _, err := s.limits(c, "context_register/3", optionList(c, op["context_options"]))
		if err != nil {
			return err
		}
		sp.in.ContextLimits = lim
	}
	sp.in.PlannerAttempts = int(min(op.int("planner_attempts"), math.MaxInt32))
	sp.in.PlannerMaxTokens = int(min(op.int("planner_max_tokens"), math.MaxInt32))
	sp.in.PlannerInstruction = op.text("planner_instruction")
	return nil
}

// budgetOf overlays budget([max_model_calls(N), ...]) (keys and types
// checked by the completion_budget/1 schema) on the default.
func budgetOf(c *prolog.Call, t engine.Term) (plan.Budget, error) {
	props, err := c.Props(t)
	if err != nil {
		return plan.Budget{}, err
	}
	fields := map[string]any{}
	for _, p := range props {
		switch v := c.Resolve(p.Value.(engine.Term)).(type) {
		case engine.Integer:
			fields[p.Key] = int64(v)
		case engine.Float:
			fields[p.Key] = float64(v)
		}
	}
	return plan.DefaultBudget().Overlay(fields)
}

// contextOf resolves the completion's context: a handle, a context_ref
// record, or a source registered now (and deleted when the call ends).
func (s *Session) contextOf(c *prolog.Call, t engine.Term, sp *spec) (plan.ContextRef, error) {
	h := c.Resolve(t)
	if _, isVar := h.(engine.Variable); isVar {
		return plan.ContextRef{}, prolog.InstantiationError()
	}
	if r, isCompound := h.(engine.Compound); isCompound && r.Functor().String() == "context_ref" && r.Arity() == 1 {
		f, err := fieldsOf(c, r.Arg(0))
		if err == nil && f["handle"] != nil {
			h = f["handle"]
		}
	}
	if ref, err := handleArg(c, h); err == nil {
		meta, err := s.handles.Metadata(ref)
		if err != nil {
			return plan.ContextRef{}, &faultError{engine.NewAtom("context_metadata_failed").Apply(atomError.Apply(contextReason(asHandleError(err)))), err.Error()}
		}
		return plan.ContextRef{Ref: ref, Metadata: meta}, nil
	}
	ref, meta, err := s.registerSource(c, h, handle.Limits{})
	if err != nil {
		return plan.ContextRef{}, &faultError{engine.NewAtom("context_registration_failed").Apply(atomError.Apply(contextReason(asHandleError(err)))), err.Error()}
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

// done ends a completion call: the query's own cancellation is thrown (it
// stops the program), a failure is an outcome through the one table (with
// the token of a cancelled call).
func (s *Session) done(c *prolog.Call, out engine.Term, phase string, err error, sp *spec) (bool, error) {
	if c.Ctx.Err() != nil {
		return false, c.Ctx.Err()
	}
	var subject []engine.Term
	if sp != nil && sp.token != "" {
		subject = []engine.Term{engine.NewAtom(sp.token)}
	}
	return s.fail(c, out, phase, err, subject...)
}

func (s *Session) rlmCompletion(c *prolog.Call, query, context_, options, out engine.Term) (bool, error) {
	q, err := promptText(c, query)
	if err != nil {
		return false, err
	}
	sp, err := s.decode(c, "rlm_completion/4", options)
	if err != nil {
		return s.done(c, out, "completion", err, nil)
	}
	if err := s.decodeCompletion(c, sp); err != nil {
		return s.done(c, out, "completion", err, sp)
	}
	sp.in.Query = q
	cref, err := s.contextOf(c, context_, sp)
	if err != nil {
		return s.done(c, out, "completion", err, sp)
	}
	sp.in.Context = cref
	return s.complete(c, out, "completion", sp)
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
	qi := plan.QueryInput{Prompt: prompt, Provider: sp.in.Providers[0], Budget: sp.in.Budget, Depth: depth,
		MaxTokens: int(min(sp.op.int("max_tokens"), math.MaxInt32))}
	if sp.op.has("temperature") {
		qi.Options = map[string]any{"temperature": sp.op.number("temperature")}
	}
	ctx, stop := s.tokens.watch(c.Ctx, sp.token)
	defer stop()
	res, err := plan.Query(ctx, qi, sp.deps.Models)
	if err != nil {
		return s.done(c, out, "query", err, sp)
	}
	fs := []prolog.Field{
		fld("elapsed_ms", engine.Float(float64(res.Elapsed.Microseconds())/1000)),
		fld("response", record("model_response", fld("model", prolog.Chars(res.Response.Model)),
			fld("reasoning", prolog.Chars(res.Response.Reasoning)), fld("text", prolog.Chars(res.Response.Text)))),
		fld("usage", usageTerm(res.Usage)),
	}
	reason := "direct"
	if tag == "rlm_query_result" {
		fs = append(fs, fld("depth", engine.Integer(depth)))
		reason = "recursive_subquery"
	}
	// Upstream's trajectory of a direct call: one model_event, its id
	// model_<hash of provider and prompt>, parent root_planner.
	h := fnv.New64a()
	_, _ = h.Write([]byte(qi.Provider + "\x00" + prompt))
	fs = append(fs, fld("trajectory", engine.List(record("model_event",
		fld("depth", engine.Integer(depth)),
		fld("elapsed_ms", engine.Float(float64(res.Elapsed.Microseconds())/1000)),
		fld("id", engine.NewAtom(fmt.Sprintf("model_%016x", h.Sum64()))),
		fld("parent", engine.NewAtom("root_planner")),
		fld("provider", engine.NewAtom(qi.Provider)),
		fld("reason", engine.NewAtom(reason)),
		fld("selected_model", prolog.Chars(res.Response.Model)),
		fld("usage", usageTerm(res.Usage)),
	))))
	return c.Unify(out, ok(record(tag, fs...))), nil
}

func (s *Session) llmQuery(c *prolog.Call, prompt, options, out engine.Term) (bool, error) {
	p, err := promptText(c, prompt)
	if err != nil {
		return false, err
	}
	sp, err := s.decode(c, "llm_query/3", options)
	if err != nil {
		return s.done(c, out, "query", err, nil)
	}
	return s.queryCall(c, p, sp, 0, out, "llm_result")
}

func (s *Session) rlmQuery(c *prolog.Call, query, sub, options, out engine.Term) (bool, error) {
	q, err := promptText(c, query)
	if err != nil {
		return false, err
	}
	sp, err := s.decode(c, "rlm_query/4", options)
	if err != nil {
		return s.done(c, out, "query", err, nil)
	}
	cref, err := s.contextOf(c, sub, sp)
	if err != nil {
		return s.done(c, out, "query", err, sp)
	}
	if sp.ephemeral != nil {
		defer s.handles.Delete(*sp.ephemeral)
	}
	depth := int(min(sp.op.int("depth"), math.MaxInt32))
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
	if !s.tokens.cancel(id) {
		return false, prolog.ExistenceError("cancellation_token", prolog.Resolved(t, c.Env))
	}
	return true, nil
}

// promptText reads a prompt or query: non-empty text. c.Text takes a
// number as its digits, but a number is never meant as a prompt:
// type_error(text, N); empty text (the empty atom, [] or "") is
// domain_error(non_empty_text, T).
func promptText(c *prolog.Call, t engine.Term) (string, error) {
	s, err := textArg(c, t)
	if err == nil && s == "" {
		err = prolog.DomainError("non_empty_text", prolog.Resolved(t, c.Env))
	}
	return s, err
}

// textArg reads a text argument: an atom, chars or codes. A number is
// type_error(text, N): prolog.Call.Text would take 0 as "0", which no
// caller of a prompt, a query or a text to count means.
func textArg(c *prolog.Call, t engine.Term) (string, error) {
	switch c.Resolve(t).(type) {
	case engine.Integer, *engine.BigInt, engine.Float:
		return "", prolog.TypeError("text", prolog.Resolved(t, c.Env))
	}
	return c.Text(t)
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

// openaiCompatibleProvider builds upstream's
// provider(openai_compatible, [endpoint(E), credential(C), model(M),
// timeout(30)]). A credential that is not env(Name) or none is a domain
// error whose culprit is not shown: it is often a pasted key.
func (s *Session) openaiCompatibleProvider(c *prolog.Call, endpoint, credential, model, out engine.Term) (bool, error) {
	e, err := c.Text(endpoint)
	if err != nil {
		return false, err
	}
	if _, isVar := c.Resolve(credential).(engine.Variable); isVar {
		return false, prolog.InstantiationError()
	}
	if _, ok := credentialOf(c, credential); !ok {
		return false, prolog.DomainError("credential", engine.NewAtom("<not shown>"))
	}
	m, err := c.Text(model)
	if err != nil {
		return false, err
	}
	return c.Unify(out, engine.NewAtom("provider").Apply(engine.NewAtom("openai_compatible"), engine.List(
		engine.NewAtom("endpoint").Apply(prolog.Chars(e)),
		engine.NewAtom("credential").Apply(prolog.Resolved(credential, c.Env)),
		engine.NewAtom("model").Apply(engine.NewAtom(m)),
		engine.NewAtom("timeout").Apply(engine.Integer(30))))), nil
}

// openrouterProvider builds upstream's openrouter provider term. An unbound
// Model is $OPENROUTER_TEST_MODEL when set (upstream's convention), else
// openrouter/free; it is bound to the model chosen.
func (s *Session) openrouterProvider(c *prolog.Call, model, out engine.Term) (bool, error) {
	m := ""
	if _, isVar := c.Resolve(model).(engine.Variable); isVar {
		if g := s.host.opts.Getenv; g != nil {
			m = g("OPENROUTER_TEST_MODEL")
		}
		if m == "" {
			m = "openrouter/free"
		}
		if !c.Unify(model, engine.NewAtom(m)) {
			return false, nil
		}
	} else {
		var err error
		if m, err = c.Text(model); err != nil {
			return false, err
		}
	}
	return c.Unify(out, engine.NewAtom("provider").Apply(engine.NewAtom("openrouter"), engine.List(
		engine.NewAtom("endpoint").Apply(prolog.Chars("https://openrouter.ai/api/v1/chat/completions")),
		engine.NewAtom("credential").Apply(engine.NewAtom("env").Apply(engine.NewAtom("OPENROUTER_API_KEY"))),
		engine.NewAtom("model").Apply(engine.NewAtom(m)),
		engine.NewAtom("timeout").Apply(engine.Integer(30))))), nil
}

// complete runs sp's completion (its own plan, or the planner's) and
// unifies out with the result; the ephemeral context handle goes when the
// completion ends.
func (s *Session) complete(c *prolog.Call, out engine.Term, phase string, sp *spec) (bool, error) {
	ctx, stop := s.tokens.watch(withCallbacks(c.Ctx, sp.cb), sp.token)
	defer stop()
	sp.in.OnExit = func(*plan.Outcome, error) {
		if sp.ephemeral != nil {
			_ = s.handles.Delete(*sp.ephemeral)
		}
	}
	res, err := plan.Complete(ctx, sp.in, sp.deps)
	sp.cb.close()
	if err != nil {
		return s.done(c, out, phase, err, sp)
	}
	t, err := completionResultTerm(res)
	if err != nil {
		return false, err
	}
	return c.Unify(out, ok(t)), nil
}
