package host

import (
	"context"
	"errors"
	"fmt"
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

// Decoding a completion call: the options shared by rlm_completion/4,
// llm_query/3 and rlm_query/4 (handlers, provider, budget, context,
// cancellation) into a spec, and the adapters that let host/plan call a
// program's planner, model and tool handlers as Go interfaces.

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
	return ask(ctx, p.cb, p.h, arg, plannerReplyOf)
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
	return ask(ctx, m.cb, m.h, arg, modelReplyOf)
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
	return ask(ctx, t.cb, h, at, func(_ *prolog.Call, res engine.Term) (any, error) { return planterm.Value(res, nil) })
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
		sp.deps.Models = prologModels{cb: sp.cb, h: op.term("model_handler")}
	}
	if op.has("planner_handler") {
		sp.deps.Planner = prologPlanner{cb: sp.cb, h: op.term("planner_handler")}
	}
	if op.has("budget") && pred != "plan_run/5" { // plan_run/5 reads upstream's plan budget
		b, err := budgetOf(c, optionList(c, op.term("budget"), "completion_budget"))
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
		pm.onDelta = s.deltaHandler(c, sp.cb, op.term("on_delta"))
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
	switch t := op.term("provider").(type) {
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
		cred, ok := credentialOf(c, op.term("credential"))
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
		elems, _ := c.List(op.term(key))
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
		elems, _ := c.List(op.term("tools"))
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
		lim, _, err := s.limits(c, "context_register/3", optionList(c, op.term("context_options")))
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
