package host

// Completion family: rlm_completion/4 and its direct-call siblings over
// host/plan, each call decoded into a spec (completion_decode.go) with its
// provider resolved per call (completion.go). Options are
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
	"errors"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/prolog"
)

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
func (s *Session) done(c *prolog.Call, out engine.Term, ph phase, err error, sp *spec) (bool, error) {
	if c.Ctx.Err() != nil {
		return false, c.Ctx.Err()
	}
	var subject []engine.Term
	if sp != nil && sp.token != "" {
		subject = []engine.Term{engine.NewAtom(sp.token)}
	}
	return s.fail(c, out, ph, err, subject...)
}

func (s *Session) rlmCompletion(c *prolog.Call, query, context_, options, out engine.Term) (bool, error) {
	q, err := promptText(c, query)
	if err != nil {
		return false, err
	}
	sp, err := s.decode(c, "rlm_completion/4", options)
	if err != nil {
		return s.done(c, out, phCompletion, err, nil)
	}
	if err := s.decodeCompletion(c, sp); err != nil {
		return s.done(c, out, phCompletion, err, sp)
	}
	sp.in.Query = q
	cref, err := s.contextOf(c, context_, sp)
	if err != nil {
		return s.done(c, out, phCompletion, err, sp)
	}
	sp.in.Context = cref
	return s.complete(c, out, phCompletion, sp)
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
		return s.done(c, out, phQuery, err, sp)
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
		return s.done(c, out, phQuery, err, nil)
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
		return s.done(c, out, phQuery, err, nil)
	}
	cref, err := s.contextOf(c, sub, sp)
	if err != nil {
		return s.done(c, out, phQuery, err, sp)
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
func (s *Session) complete(c *prolog.Call, out engine.Term, ph phase, sp *spec) (bool, error) {
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
		return s.done(c, out, ph, err, sp)
	}
	t, err := completionResultTerm(res)
	if err != nil {
		return false, err
	}
	return c.Unify(out, ok(t)), nil
}
