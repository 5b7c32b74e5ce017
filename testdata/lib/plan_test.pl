% Suite for lib/rlm_plan.pl: upstream's plan API (plan_parse/2,
% plan_validate/4, plan_run/5) over the executor rlm_completion/4 uses.
:- set_prolog_flag(double_quotes, chars).

search_plan_(plan([context(input(context), search("needle"), hits), final(var(hits))])).
double_(X, Y) :- Y is 2 * X.
echo_model_(Call, model_response([text(T), usage(usage([prompt_tokens(3), completion_tokens(2), total_tokens(5)]))])) :-
    record_get(Call, prompt, P), atom_chars(A, P), atom_concat('echo: ', A, T).

% plan_parse/2
test(parse_json_text,
     (   plan_parse('{"steps":[{"op":"final","value":"hi"}]}', ok(P)),
         P == plan([final(literal("hi"))])
     )).
test(parse_json_in_prose,
     (   plan_parse("Sure! {\"steps\":[{\"op\":\"final\",\"value\":1}]} done", ok(P)),
         P == plan([final(literal(1))])
     )).
test(parse_term_text,
     (   plan_parse("plan([context(input(context), search(\"x\"), r), final(var(r))])", ok(P)),
         P = plan([context(input(context), search(S), r), final(var(r))]), S == "x"
     )).
test(parse_term,
     (   search_plan_(P0), plan_parse(P0, ok(P)), P == P0 )).
test(parse_bad_json_is_an_outcome,
     (   plan_parse('{"steps":[{"op":"final"', error(E)),
         E = plan_error(_), record_get(E, phase, parse)
     )).
test(parse_unknown_operator_is_an_outcome,
     (   plan_parse(plan([launch(missiles), final(literal(1))]), error(E)),
         E = plan_error(_), record_get(E, kind, invalid_plan)
     )).
test(parse_number_is_unsupported_input,
     (   plan_parse(42, error(E)), record_get(E, kind, unsupported_input),
         record_get(E, value_shape, integer)
     )).
test(parse_non_ground_plan_is_an_outcome,
     (   plan_parse(plan([final(var(_))]), error(E)), E = plan_error(_) )).
test(parse_cyclic_plan_is_rejected,
     (   P = plan([rlm(P, r), final(var(r))]),
         plan_parse(P, error(E)),
         record_get(E, kind, recursive_plan_rejected), record_get(E, phase, validate),
         record_get(E, detail, recursive_cycle(cyclic_term))
     )).
test(parse_unbound, [throws(error(instantiation_error, plan_parse/2))],
     plan_parse(_, _)).

% plan_validate/4
test(validate_ok_reports_estimate_and_recursion,
     (   plan_validate(plan([context(input(context), search("a"), h),
                             rlm(plan([context(input(context), peek(head(1)), x), final(var(x))]), c),
                             final(var(c))]),
                       [rlm, context(search), context(peek)], default, ok(V)),
         V = validated_plan(_),
         record_get(V, estimate/context_ops, 2),
         record_get(V, recursion/recursive_calls, 1),
         record_get(V, recursion/max_depth, 1),
         record_get(V, budget/max_steps, 64),
         record_get(V, capabilities, Caps), Caps == [context(peek), context(search), rlm]
     )).
test(validate_unbound_variable,
     (   plan_validate(plan([final(var(missing))]), [], default, error(E)),
         record_get(E, kind, invalid_plan), record_get(E, phase, validate),
         record_get(E, detail, unbound_variable(missing))
     )).
test(validate_undeclared_capability,
     (   plan_validate(plan([tool(double, literal(2), r), final(var(r))]), [rlm], default, error(E)),
         record_get(E, kind, capability_denied), record_get(E, capability, C), C == tool(double)
     )).
test(validate_child_capability_denied_is_a_term,
     (   plan_validate(plan([rlm(plan([tool(secret, literal(1), s), final(var(s))]), r), final(var(r))]),
                       [rlm], default, error(E)),
         record_get(E, kind, recursive_plan_rejected),
         record_get(E, detail, child_capability_denied(C)), C == tool(secret)
     )).
test(validate_budget_violation,
     (   search_plan_(P),
         plan_validate(P, [context(search)], [max_context_ops(0)], error(E)),
         record_get(E, kind, budget_exceeded), record_get(E, budget, context_ops),
         record_get(E, estimated, 1), record_get(E, limit, 0)
     )).
test(validate_budget_field_unknown,
     (   search_plan_(P),
         plan_validate(P, [context(search)], [max_widgets(3)], error(E)),
         record_get(E, detail, unknown_budget_field(max_widgets))
     )).
% A plan deeper than upstream's plan budget is a budget violation, in
% upstream's levels (the root plan is level 1), as upstream reports it.
test(validate_too_deep_plan_exceeds_the_depth_budget,
     (   Deep = plan([rlm(plan([rlm(plan([final(literal(1))]), b), final(var(b))]), a), final(var(a))]),
         plan_validate(Deep, [rlm], [max_depth(2)], error(E)),
         E = plan_error(_), record_get(E, kind, budget_exceeded), record_get(E, phase, validate),
         record_get(E, budget, depth), record_get(E, estimated, 3), record_get(E, limit, 2)
     )).
test(validate_depth_within_the_budget,
     (   Deep = plan([rlm(plan([rlm(plan([final(literal(1))]), b), final(var(b))]), a), final(var(a))]),
         plan_validate(Deep, [rlm], [max_depth(3)], ok(V)),
         record_get(V, estimate/depth, 3)
     )).
test(validate_cyclic_plan_is_rejected,
     (   P = plan([rlm(P, r), final(var(r))]),
         plan_validate(P, [rlm], default, error(E)),
         record_get(E, kind, recursive_plan_rejected), record_get(E, phase, validate)
     )).
test(validate_does_not_preflight,
     (   plan_validate(plan([model(nowhere, literal("x"), [], r), final(var(r))]), [model(nowhere)], default, ok(_)) )).
test(validate_caps_not_a_list, [throws(error(type_error(list, rlm), plan_validate/4))],
     plan_validate(plan([final(literal(1))]), rlm, default, _)).
test(validate_bad_capability_is_an_outcome,
     (   plan_validate(plan([final(literal(1))]), [telepathy], default, error(E)),
         record_get(E, kind, completion_fault)
     )).

% plan_run/5
test(run_upstream_order,
     (   search_plan_(P),
         plan_run(P, [context(search)], [], inputs([context(text("hay\nthe needle\nhay")), query("find")]), ok(R)),
         record_get(R, value, [M]), record_get(M, index, 1),
         record_get(R, planner_attempts, 0),
         record_get(R, used/context_ops, 1)
     )).
test(run_issue_order,
     (   search_plan_(P),
         plan_run(P, text("a needle"), [context(search)], [], ok(R)),
         record_get(R, value, [_])
     )).
test(run_json_text,
     (   plan_run('{"steps":[{"op":"final","value":"done"}]}', [], [], inputs([context(text("x"))]), ok(R)),
         record_get(R, value, V), V == "done"
     )).
test(run_tools_upstream_shape,
     (   plan_run(plan([tool(double, literal(21), r), final(var(r))]), [tool(double)],
                  [tools([tool(double, double_)])], inputs([context(text("x"))]), ok(R)),
         record_get(R, value, 42), record_get(R, vars/r, 42)
     )).
test(run_model_steps_use_the_handler,
     (   plan_run(plan([model(p, literal("ping"), [], r), final(field(var(r), text))]), [model(p)],
                  [model_handler(echo_model_), provider(p)], inputs([context(text("x"))]), ok(R)),
         record_get(R, value, V), V == "echo: ping",
         record_get(R, usage/model_calls, 1)
     )).
test(run_recursion_statistics,
     (   plan_run(plan([rlm(plan([context(input(context), reduce(count), n), final(var(n))]), c), final(var(c))]),
                  [rlm, context(reduce)], [], inputs([context(text("a\nb\nc"))]), ok(R)),
         record_get(R, recursion, Rec), Rec = recursion(_),
         record_get(Rec, calls, 1), record_get(Rec, depth, 1), record_get(Rec, max_depth, 1)
     )).
test(run_capability_denied_before_side_effects,
     (   plan_run(plan([tool(double, literal(1), r), final(var(r))]), [],
                  [tools([tool(double, double_)])], inputs([context(text("x"))]), error(E)),
         record_get(E, kind, capability_denied)
     )).
test(run_unknown_tool_is_preflight,
     (   plan_run(plan([tool(triple, literal(1), r), final(var(r))]), [tool(triple)],
                  [], inputs([context(text("x"))]), error(E)),
         record_get(E, phase, preflight), record_get(E, kind, unknown_tool)
     )).
test(run_budget_is_enforced,
     (   plan_run(plan([context(input(context), search("a"), x), context(input(context), search("b"), y), final(var(y))]),
                  [context(search)], [budget([max_context_ops(1)])], inputs([context(text("ab"))]), error(E)),
         record_get(E, kind, budget_exceeded)
     )).
test(run_unknown_option, [throws(error(domain_error(plan_run_option, colour(red)), plan_run/5))],
     plan_run(plan([final(literal(1))]), [], [colour(red)], inputs([context(text("x"))]), _)).

% Upstream's inputs are optional: a plan with no context step needs none,
% and one that reads a missing input is refused before any step runs.
:- dynamic(marked_/0).
mark_(V, V) :- assertz(marked_).
test(run_without_inputs,
     (   plan_run(plan([final(literal(done))]), [], [], dict([]), ok(R)), record_get(R, value, done),
         plan_run(plan([final(literal(done))]), [], [], [], ok(_)),
         plan_run(plan([final(input(query))]), [], [], inputs([query("q")]), ok(Q)), record_get(Q, value, V), V == "q"
     )).
test(run_missing_context_is_refused_before_side_effects,
     (   retractall(marked_),
         plan_run(plan([tool(mark, literal(1), m), context(input(context), search("a"), h), final(var(h))]),
                  [tool(mark), context(search)], [tools([tool(mark, mark_)])], dict([]), error(E)),
         record_get(E, phase, validate), record_get(E, detail, missing_input(context)),
         \+ marked_,
         plan_run(plan([rlm(query("sub"), c), final(var(c))]), [rlm], [], [], error(E2)),
         record_get(E2, detail, missing_input(context))
     )).

% Upstream's result fields beside ours: transitions (the finished steps),
% budget_remaining (= remaining) and the recursion's recursive_calls.
test(run_result_has_upstreams_fields,
     (   plan_run(plan([checkpoint(c1), rlm(plan([final(literal(1))]), x), final(var(x))]),
                  [checkpoint, rlm], [], [], ok(R)),
         record_get(R, transitions, Ts),
         findall(S-Op-B, ( member(T, Ts), record_get(T, sequence, S), record_get(T, operation, Op),
                           record_get(T, bind, B), record_get(T, status, ok) ), Steps),
         Steps == [1-checkpoint-none, 2-final-none, 3-rlm-x, 4-final-none],
         record_get(R, remaining, Rem), record_get(R, budget_remaining, Rem),
         record_get(Rem, steps, 60),
         record_get(R, recursion/recursive_calls, 1), record_get(R, recursion/calls, 1)
     )).
test(run_transition_operations_are_terms,
     (   plan_run(plan([context(input(context), search("b"), r), tool(double, literal(2), d), final(var(d))]),
                  [context(search), tool(double)], [tools([tool(double, double_)])],
                  inputs([context(text("a\nb"))]), ok(R)),
         record_get(R, transitions, [T1, T2, T3]),
         record_get(T1, operation, context(search)), record_get(T2, operation, tool(double)),
         record_get(T3, operation, final)
     )).

% A nested plan's result is produced again into its parent: the shared
% output budget counts it there too (upstream's rule).
payload_(_, "0123456789012345678901234567890123456789").
test(run_nested_result_counts_at_the_parent,
     (   Child = plan([tool(payload, literal(go), p), final(var(p))]),
         Caps = [rlm, tool(payload)], Tools = tools([tool(payload, payload_)]),
         plan_run(plan([rlm(Child, c), final(var(c))]), Caps, [Tools, budget([max_output_bytes(50)])], [], error(E)),
         record_get(E, kind, budget_exhausted), record_get(E, budget, output_bytes),
         plan_run(plan([rlm(Child, c), final(var(c))]), Caps, [Tools, budget([max_output_bytes(84)])], [], ok(R)),
         record_get(R, used/output_bytes, 84)
     )).

% plan_validate/4 checks a plan term as it is: a step of no known shape is
% a validation error (plan_parse/2 says normalize).
test(validate_raw_call_is_a_validation_error,
     (   plan_validate(plan([call(shell(id)), final(literal(done))]), [], default, error(E)),
         record_get(E, phase, validate), record_get(E, kind, invalid_plan),
         record_get(E, detail, unknown_or_malformed_operation(call/1)),
         plan_parse(plan([call(shell(id)), final(literal(done))]), error(E2)),
         record_get(E2, phase, normalize)
     )).

% A model step's options may be upstream's dict, a record.
test(run_model_options_may_be_a_record,
     (   plan_run(plan([model(p, literal("ping"), dict([max_tokens(8)]), r), final(field(var(r), text))]), [model(p)],
                  [model_handler(echo_model_), provider(p)], [], ok(R)),
         record_get(R, value, V), V == "echo: ping"
     )).
