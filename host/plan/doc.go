// Package plan is the plan language, validator and executor behind
// rlm_completion/4: a planner model answers a goal with one typed plan over
// an opaque context handle; the plan is read (JSON or a Prolog term),
// validated whole before any side effect, and executed under global
// budgets, with cancellation and time limits as control signals.
//
// It owns the closed plan AST ([Plan], [Step], [Expr]), the parsers
// ([ParseJSON], [ParseTerm], [ParseText], [FromTerm]), validation
// ([Validate]), budgets and usage accounting ([Budget], [Counters],
// [UsageTotals]), the planner prompt ([RenderPrompt]), the completion
// loop ([Complete]) and the direct bounded model call behind llm_query/3
// and rlm_query/4 ([Query], [RLMQueryPrompt]). It leaves to the caller (the
// Prolog layer, host/provider) everything it calls, declared here as small
// interfaces: [Contexts] (a *handle.Registry), [Models], [Tools], [Planner]
// and [TermReader]; it knows nothing of HTTP, credentials, Prolog terms or
// predicates, and imports no Prolog (a layering test keeps it so). Model
// and planner calls carry a whole chat request (tokenizer.Request), so a
// packed conversation reaches the model as the request it was counted as.
//
// # Plan syntax
//
// The two surfaces are the same AST; [Plan.String] renders the term form
// canonically and [ParseTerm] reads it back.
//
//	Plan   ::= plan([Step, ...])                    {"steps":[Step, ...]}
//	Step   ::= context(Expr, Action, Bind)          {"op":"context","handle":E,"action":A,"bind":B}
//	         | model(Provider, Expr, [Opt(V)], Bind) {"op":"model","provider":P,"prompt":E,"options":{...},"bind":B}
//	         | rlm(query(Expr[, Expr]), Bind)       {"op":"rlm","query":E[,"context":E],"bind":B}
//	         | rlm(Plan, Bind)                      {"op":"rlm","plan":Plan,"bind":B}
//	         | tool(Name, Expr, Bind)               {"op":"tool","name":N,"args":E,"bind":B}
//	         | parallel([Plan, ...], Bind)          {"op":"parallel","plans":[Plan,...],"bind":B}
//	         | retry(N, Plan, Bind)                 {"op":"retry","attempts":N,"plan":Plan,"bind":B}
//	         | respond(Provider, Bind)              {"op":"respond","provider":P,"bind":B}
//	         | checkpoint(Label)                    {"op":"checkpoint","label":L}
//	         | final(Expr)                          {"op":"final","value":E}
//	         | spawn_agent(Spec, Caps, Bind)        sugar for tool(spawn_agent, ...), as upstream
//	Action ::= peek(metadata | head(N) | tail(N) | item(I)) | slice(Start, Len) | search("text")
//	         | partition(fixed(N) | lines(N)) | map(identity | lowercase | uppercase | length)
//	         | reduce(count | byte_count)
//	         JSON: {"type":"search","pattern":S}, {"type":"slice","start":I,"length":I},
//	         {"type":"peek","selector":"metadata" | {"type":"head"|"tail","count":I} | {"type":"item","index":I}},
//	         {"type":"partition","strategy":{"type":"fixed"|"lines","size":I}},
//	         {"type":"map","transform":S}, {"type":"reduce","reducer":S}
//	Expr   ::= literal(V) | input(context | query) | var(Name) | field(Expr, Key)
//	         | list([Expr, ...]) | object([Key-Expr, ...])
//	         JSON: a scalar is a literal; {"ref":"input"|"var","name":N}; {"ref":"field","value":E,"key":K};
//	         an array is a list; any other object is an object expression
//
// Example, in both syntaxes:
//
//	plan([context(input(context), search("needle"), hits), tool(count_items, var(hits), n), final(var(n))])
//	{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"hits"},
//	          {"op":"tool","name":"count_items","args":{"ref":"var","name":"hits"},"bind":"n"},
//	          {"op":"final","value":{"ref":"var","name":"n"}}]}
//
// Term text is read by a [TermReader] into a raw term tree ([Term]), which
// [FromTerm] walks. The host's reader (host/planterm) uses a private Prolog
// VM with the standard operator table (never the caller's): no variables,
// bounded bytes, depth and subterms, never executed. With
// double_quotes=chars, "text" is a string and the empty string reads as []
// (the empty list). In term literals an atom is an [Atom], a non-empty list
// of one-char atoms a string, and a compound a [Record] or a [Compound].
//
// Planner text may wrap the plan in prose or a markdown fence. JSON is found
// by a balanced-brace scanner that knows JSON strings (each '{' is tried, the
// first balanced object with a "steps" key wins); a term plan starts at the
// first word plan( and ends at its balanced ')'. Errors are [*ParseError]
// with a position and a message written to be fed back to the planner.
//
// rlm has two forms. rlm(plan(...)) is upstream's: a child plan written by
// the parent planner, run in a child scope (it sees the parent's vars; its
// own bindings do not leak) at depth+1 under the child capabilities.
// rlm(query(Goal[, Handle])) is a real child completion: a nested
// [Planner] call (the prompt says "child planner at depth d") whose answer
// is parsed, validated against the child capabilities and executed in a
// fresh scope (inputs context and query only), sharing the root's counters.
//
// # Validation
//
// [Validate] checks the whole plan before any side effect (see its doc for
// the order and the error shapes): structure (one final, last; known
// shapes; allow-listed actions; scopes: no use before bind, no rebinding in
// the visible scope), recursion (cycles, an rlm child equal to an ancestor,
// retry(N>1) around rlm, duplicate children, rlm depth, child capabilities
// narrowed and never widened), capabilities (context(Action), model(P),
// tool(N), rlm, parallel, retry, checkpoint), the static budget estimate
// (steps, model calls, tool calls, context operations) and preflight
// (unknown providers and tools). Child completions planned at run time go
// through the same checks at their depth, with the ancestors' fingerprints,
// and the same goal and context twice is a duplicate.
//
// # Budgets
//
// One [Budget] (upstream's defaults, [DefaultBudget]; [Budget.Overlay]
// rejects unknown keys) bounds the whole completion. Its counters are global
// across nesting, branches, retries and child completions, and are never
// refunded: steps (every step, final included), model calls (planner calls
// included), tool calls, context operations, output bytes, tokens, cost,
// wall time and recursion depth. Rules that differ from upstream:
//
//   - Output bytes measure the canonical JSON encoding of a value ([Size]),
//     charged once when a value is produced (a context, model or tool
//     result; the literals and list/object structure a final builds), not
//     again when it is bound, passed through a child's final or read by var.
//   - Unknown usage is enforced. A call that reports no token count is
//     charged ceil(prompt bytes / 3) for an unknown prompt count and its
//     max_tokens cap for an unknown completion count; [UsageTotals] says
//     TokensKnown=false and EstimatedTokens. A call without a cost is
//     charged Budget.UnknownCallCostUSD (default 0) and CostKnown=false.
//   - Before each model or planner call, max_tokens is capped by the
//     remaining tokens, and a call with no token or call left is not made.
//   - Parallel width is not a budget: max_concurrent_subcalls bounds how
//     many branches run at once. Recursion depth counts rlm nesting only, so
//     parallel and retry may appear inside children.
//
// # Concurrency
//
// [Complete] is safe for concurrent use; each call owns its state. parallel
// branches run in goroutines, at most MaxConcurrentSubcalls at a time, and
// their results (and trajectory events) come back in branch order; the
// first failing branch cancels the others. The dependencies must be safe for
// concurrent use. Complete returns only after every branch goroutine ended;
// a model, tool or planner call that ignores its context is abandoned (its
// goroutine finishes on its own, its result discarded) so that cancellation
// and time limits always return promptly. They are reported as
// [KindCancelled] and [KindTimeout], never as a step's error, a retry never
// retries them, and Input.OnExit runs in every case.
//
// # Usage
//
//	reg := handle.New(nil)
//	ref, meta, _ := reg.RegisterText(text, handle.Limits{})
//	out, err := plan.Complete(ctx, plan.Input{
//		Query:        "How many lines mention the needle?",
//		Context:      plan.ContextRef{Ref: ref, Metadata: meta},
//		Capabilities: plan.MustCapabilities("context(search)", "tool(count_items)"),
//		Tools:        []plan.ToolSchema{{Name: "count_items", Description: "counts a list"}},
//	}, plan.Deps{Contexts: reg, Planner: myPlanner, Tools: myTools, Terms: planterm.Reader{}})
//	var pe *plan.Error
//	switch {
//	case plan.IsControl(err):
//		// cancelled or timed out: err unwraps to ctx.Err()
//	case errors.As(err, &pe):
//		fmt.Println(pe.Record()) // plan_error([...]) or completion_error([...])
//	default:
//		fmt.Println(out.Value, out.Usage, len(out.Trajectory.Events))
//	}
package plan
