% Suite for what a completion did (issue 27): recursion statistics in
% completion results, trajectories in llm_result and rlm_query_result
% records, denial details as terms.
:- set_prolog_flag(double_quotes, chars).

echo_model_(Call, model_response([text(T), model(tiny), usage(usage([prompt_tokens(3), completion_tokens(2), total_tokens(5)]))])) :-
    record_get(Call, prompt, P), atom_chars(A, P), atom_concat('echo: ', A, T).
nested_planner_(_, plan([rlm(plan([context(input(context), reduce(count), n), final(var(n))]), c), final(var(c))])).
% The root asks for a child completion; the child planner answers at once.
child_planner_(Req, Plan) :-
    record_get(Req, depth, D),
    (   D =:= 0
    ->  Plan = plan([rlm(query(literal("count the lines")), c), final(var(c))])
    ;   Plan = plan([final(literal("child done"))])
    ).
secret_planner_(_, plan([rlm(plan([tool(secret, literal(1), s), final(var(s))]), r), final(var(r))])).
flat_planner_(_, plan([final(literal(1))])).

test(llm_result_carries_its_trajectory,
     (   llm_query("ping", [model_handler(echo_model_)], ok(R)),
         record_get(R, trajectory, [E]), E = model_event(_),
         record_get(E, parent, root_planner), record_get(E, reason, direct),
         record_get(E, depth, 0), record_get(E, id, Id), atom_concat(model_, _, Id),
         record_get(E, selected_model, M), M == "tiny",
         record_get(E, usage/total_tokens, 5)
     )).
test(rlm_query_result_carries_its_trajectory,
     (   rlm_query("what is in it", text("payload"), [model_handler(echo_model_)], ok(R)),
         record_get(R, trajectory, [E]), record_get(E, reason, recursive_subquery),
         record_get(E, depth, 1)
     )).
test(completion_result_reports_recursion,
     (   rlm_completion("q", text("a\nb"), [planner_handler(nested_planner_)], ok(R)),
         record_get(R, recursion, Rec), Rec = recursion(_),
         record_get(Rec, calls, 1), record_get(Rec, children, 0),
         record_get(Rec, depth, 1), record_get(Rec, max_depth, 1),
         record_get(Rec, fingerprints, [F]), integer(F)
     )).
test(child_completions_are_counted,
     (   rlm_completion("q", text("a\nb"), [planner_handler(child_planner_)], ok(R)),
         record_get(R, value, V), V == "child done",
         record_get(R, recursion/children, 1), record_get(R, recursion/depth, 1)
     )).
test(flat_plan_has_no_recursion,
     (   rlm_completion("q", text("a"), [planner_handler(flat_planner_)], ok(R)),
         record_get(R, recursion, recursion([calls(0), children(0), depth(0), fingerprints([]), max_depth(0),
                                             recursive_calls(0)]))
     )).
test(child_capability_denied_is_a_term,
     (   rlm_completion("q", text("a"), [planner_handler(secret_planner_), planner_attempts(1),
                                         capabilities([rlm, tool(secret)]), child_capabilities([rlm]),
                                         tools([tool(secret, "s", '{}', succ)])], error(E)),
         record_get(E, kind, K), memberchk(K, [plan_parse_failed, recursive_plan_rejected]),
         (   K == recursive_plan_rejected -> record_get(E, detail, D)
         ;   record_get(E, cause, Cause), record_get(Cause, detail, D)
         ),
         D = child_capability_denied(C), C == tool(secret)
     )).
test(widening_denial_lists_terms,
     (   rlm_completion("q", text("a"), [planner_handler(flat_planner_), capabilities([rlm]),
                                         child_capabilities([rlm, tool(x)])], error(E)),
         record_get(E, detail, capability_error(CE)),
         record_get(CE, unauthorized, U), U == [tool(x)],
         record_get(CE, parent, P), P == [rlm]
     )).
test(completion_result_child_capabilities_are_terms,
     (   rlm_completion("q", text("a"), [planner_handler(flat_planner_), capabilities([rlm, context(search)])], ok(R)),
         record_get(R, child_capabilities, Cs), Cs == [context(search), rlm]
     )).
