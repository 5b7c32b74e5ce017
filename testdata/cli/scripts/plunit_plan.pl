% An upstream-style plunit file: it loads and runs under rlmpl run unchanged.
:- use_module(library(plunit)).
:- use_module('../prolog/rlm_plan').

:- begin_tests(rlm_plan).

test(json_text_normalizes_to_a_plan_term) :-
    plan_parse('{"steps":[{"op":"final","value":"hi"}]}', ok(Plan)),
    assertion(Plan == plan([final(literal("hi"))])).

test(unbound_variable_is_rejected, [true(Detail == unbound_variable(x))]) :-
    plan_validate(plan([final(var(x))]), [], default, error(E)),
    record_get(E, detail, Detail).

test(capability_denied, [error(existence_error(_, _))]) :-
    plan_validate(plan([tool(t, literal(1), r), final(var(r))]), [], default, error(_)),
    undefined_helper.

test(runs_a_context_search, all(I == [1])) :-
    plan_run(plan([context(input(context), search("b"), r), final(var(r))]),
             [context(search)], [], inputs([context(text("a\nb"))]), ok(R)),
    record_get(R, value, Ms),
    member(M, Ms),
    record_get(M, index, I).

test(cyclic_plan, [fail]) :-
    P = plan([rlm(P, r), final(var(r))]),
    plan_parse(P, ok(_)).

:- end_tests(rlm_plan).

:- initialization(run_tests, main).
