/** <module> Typed plans: parse, validate and run them yourself

The plan API of the upstream system: a program builds a plan (or reads
one a model wrote), checks it against capabilities and a budget before any
side effect, and runs it over a context handle under the same budgets,
authority and executor as rlm_completion/4 (host/plan: one parser, one
validator, one executor; nothing here is a second implementation). The
grammar is host/plan's (rlm_completion/4's planner prompt states it):
plan([Step, ...]) with context/3, model/4, rlm/2, tool/3, parallel/2,
retry/3, checkpoint/1 and a last final/1, or the same as JSON
{"steps":[...]}.

Errors. An unbound argument, a capability list that is not a list and a
bad option throw ISO errors naming the predicate. What depends on the plan
is an outcome: error(plan_error([kind(K), message(M), phase(P), ...])) for
parse, normalize, validate (invalid_plan with detail(D), capability_denied
with capability(C), budget_exceeded with budget, estimated and limit),
preflight (unknown_provider, unknown_tool) and execute;
error(completion_error([detail(D), kind(recursive_plan_rejected),
phase(validate), ...])) for cyclic plans, repeated or duplicated children
and child_capability_denied(Cap) (Cap a term such as tool(search), never
quoted text); recursion deeper than the plan budget is budget_exceeded
with budget(depth), as upstream's plan API reports it (rlm_completion/4's
own budget says recursive_plan_rejected, recursion_depth_exceeded(D,
Max)).

Exports:
    plan_parse/2                 % +Input, -Outcome
    plan_validate/4              % +Plan, +Capabilities, +Budget, -Outcome
    plan_run/5                   % +Plan, +Capabilities, +Options, +Inputs, -Outcome
*/

%!  plan_parse(+Input, -Outcome) is det.
%
%   Input is a plan([...]) term, a validated_plan record, or text (an atom
%   or a string) holding JSON or a term plan, possibly wrapped in prose or
%   a markdown fence as a model writes it. Outcome is ok(plan([...])) — the
%   canonical plan term, JSON or not — or error(plan_error([...])): phase
%   parse (no plan found, bad JSON or term syntax), normalize (not a plan
%   of the closed grammar) or parse with kind(unsupported_input) and
%   value_shape(S) for a number or a non-plan compound. A cyclic term is
%   error(completion_error([detail(recursive_cycle(cyclic_term)),
%   kind(recursive_plan_rejected), phase(validate), ...])).
%
%   ?- plan_parse('{"steps":[{"op":"final","value":"hi"}]}', ok(P)).
%   P = plan([final(literal("hi"))]).

%!  plan_validate(+Plan, +Capabilities, +Budget, -Outcome) is det.
%
%   Checks the whole plan before any side effect, the plan term as it is
%   (a step of no known shape is invalid_plan in phase validate, detail
%   unknown_or_malformed_operation(Name/Arity)): structure and scopes
%   (detail unbound_variable(N), duplicate_binding(N), final not last,
%   ...), recursion, the capabilities of every step (children get the same
%   set), and the static estimate against Budget, depth included: a plan
%   nested deeper than max_depth is plan_error budget_exceeded with
%   budget(depth), estimated(D) and limit(M), counted in upstream's levels
%   (the root plan is level 1). Budget is default
%   (upstream's plan_budget: max_steps 64, max_depth 4, max_parallel 8,
%   max_model_calls 8, max_tool_calls 16, max_context_ops 32,
%   max_output_bytes 65536, time_limit 10.0), a list of those fields
%   overlaying it (the fields of default_completion_budget/1 are accepted
%   too), or plan_budget([...]). An unknown field is
%   error(plan_error([detail(unknown_budget_field(K)), kind(invalid_plan),
%   phase(validate), ...])). Outcome is ok(validated_plan([budget(B),
%   capabilities(Cs), estimate(plan_estimate([context_ops, depth,
%   model_calls, parallel_width, steps, tool_calls])), plan(P),
%   recursion(recursion_stats([fingerprints, max_depth,
%   recursive_calls]))])). Providers and tools are checked by plan_run/5
%   (preflight), when a runtime exists.
%
%   ?- plan_validate(plan([final(var(x))]), [], default, error(E)).
%   % E's detail is unbound_variable(x)

%!  plan_run(+Plan, +Capabilities, +Options, +Inputs, -Outcome) is det.
%
%   Parses (Plan may be text), validates and executes a plan, as
%   rlm_completion/4 executes its planner's plan: the same executor,
%   budgets (default: upstream's plan_budget above, or budget(B) with B as
%   plan_validate/4's), authority (Capabilities; child_capabilities(L)
%   narrows rlm children), cancellation (cancel_token(T)) and model calls
%   (provider(P), model(M) or model_handler(H), which also answers every
%   model step). Inputs is upstream's inputs record, any Tag([context(C),
%   query(Q)]) or list of those, with C a context handle, a context_ref
%   record, text(T) or terms(L) (the last two registered for the run and
%   deleted after); both are optional, and a plan that reads a missing
%   one is refused before any step runs (invalid_plan, detail
%   missing_input(Name)).
%   Options: tools([tool(Name, Handler)]) or rlm_completion/4's
%   tool(Name, Description, Schema, Handler), context_options(L),
%   budget(B), child_capabilities(L), provider(P), model(M),
%   model_handler(H), cancel_token(T), query(Q).
%
%   The issue's order plan_run(+Plan, +Context, +Capabilities, +Options,
%   -Outcome) is accepted too: a list in second place is read as
%   upstream's capability list, anything else as the context.
%
%   Outcome is ok(completion_result([...])), the record rlm_completion/4
%   returns (planner_attempts(0): no planner ran), including
%   recursion([calls(N), children(K), depth(D), fingerprints(Fs),
%   max_depth(M), recursive_calls(N)]), vars(bindings([Name(Value), ...])),
%   and upstream's transitions and budget_remaining, or error(E) with E a
%   plan_error, completion_error or provider_error record. A nested plan's
%   result counts against max_output_bytes again when its parent binds it
%   (upstream's rule: nested plans share the output budget).
%
%   ?- plan_run(plan([context(input(context), search("b"), r), final(var(r))]),
%   |           [context(search)], [], inputs([context(text("a\nb"))]), O).
