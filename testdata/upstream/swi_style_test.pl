% A plunit file in upstream's SWI-Prolog dialect (dicts, functional
% notation on dicts, get_dict/3, module-qualified closures), written for
% this repository: TestUpstreamHarness translates and runs it exactly as
% make upstream-tests does upstream's own files, so the harness is tested
% without a copy of upstream.
:- use_module(library(plunit)).
:- use_module('../prolog/rlm_plan').
:- use_module('../prolog/rlm_context').

:- begin_tests(swi_style).

double(X, Y) :- Y is 2 * X.

test(dict_inputs_and_dict_access) :-
    Plan = plan([tool(double, literal(21), d), final(var(d))]),
    plan_run(Plan, [tool(double)], [tools([tool(double, swi_style:double)])], _{}, ok(Result)),
    assertion(Result.value =:= 42),
    Result.transitions = [T|_],
    assertion(T.operation == tool(double)),
    assertion(Result.budget_remaining.tool_calls =:= 15).

test(dict_budget_keys_in_any_order) :-
    Plan = plan([checkpoint(a), final(literal(1))]),
    plan_validate(Plan, [checkpoint], _{max_steps:1, max_depth:4}, error(Error)),
    assertion(Error.kind == budget_exceeded),
    assertion(Error.budget == steps).

test(get_dict_chains_and_findall) :-
    context_register(text("alpha\nbeta"), [], ok(Ref)),
    get_dict(handle, Ref, Handle),
    context_search(Handle, "beta", [], ok(Search)),
    assertion(Search.trace.items_inspected > 0),
    findall(V, ( member(M, Search.value), V = M.value ), Values),
    assertion(Values == ["beta"]),
    context_delete(Ref.handle, ok(_)).

test(access_that_fails, [fail]) :-
    X = point{x:1, y:2},
    X.y =:= 3.

:- end_tests(swi_style).
