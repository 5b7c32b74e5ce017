% A plan over a context backend written in Prolog: `rlmpl run
% examples/plan_adapter.pl`.
%
% The program exposes a small knowledge base of facts as an opaque context
% handle (context_adapter_register/5), builds a plan that searches it in a
% child plan, checks the plan against its capabilities and a budget
% (plan_validate/4), runs it under the same executor, budgets and
% authority as rlm_completion/4 (plan_run/5) and reads what the
% completion did: its value, its recursion statistics and its counters.
% No model is called.
:- initialization(main, main).

% The knowledge base: what the handle serves, never shown to a planner.
fact(0, "the harbor opens at dawn").
fact(1, "the lighthouse keeper logs every ship").
fact(2, "ships that arrive after dusk anchor outside the harbor").

kb_meta(kb(Name), [kind(facts), items(N), name(Name)]) :-
    aggregate_all(count, fact(_, _), N).

kb_op(search(Pattern), kb(_), _Limits, [value(Matches), items_inspected(N), truncated(false)]) :-
    findall(match([index(I), value(T)]), (fact(I, T), sub_string(T, _, _, _, Pattern)), Matches),
    aggregate_all(count, fact(_, _), N).
kb_op(reduce(count), kb(_), _Limits, [value(N)]) :-
    aggregate_all(count, fact(_, _), N).

main :-
    context_adapter_register(kb, [operations([search, reduce])], kb_meta, kb_op, ok(_)),
    context_register_adapter(kb, kb(harbor), [], ok(Ref)),
    record_get(Ref, handle, H),
    context_backend(H, Backend),
    record_get(Backend, operations, Ops),
    record_get(Backend, filesystem, FS), record_get(Backend, network, Net),
    format("backend adapter(kb): operations ~w, filesystem ~w, network ~w~n", [Ops, FS, Net]),
    Plan = plan([ context(input(context), reduce(count), total),
                  rlm(plan([context(input(context), search("harbor"), hits), final(var(hits))]), found),
                  final(object([total-var(total), found-var(found)])) ]),
    Caps = [rlm, context(search), context(reduce)],
    plan_validate(Plan, Caps, default, ok(Valid)),
    record_get(Valid, estimate, Estimate),
    record_get(Estimate, context_ops, EstOps),
    format("validated: at most ~d context operations~n", [EstOps]),
    plan_validate(Plan, [rlm, context(search)], default, error(Denied)),
    record_get(Denied, capability, Missing),
    format("without context(reduce): denied ~q~n", [Missing]),
    plan_run(Plan, Caps, [], inputs([context(H), query("what about the harbor?")]), ok(R)),
    record_get(R, value, V),
    record_get(V, total, Total),
    record_get(V, found, Found),
    length(Found, NFound),
    format("~d facts, ~d mention the harbor~n", [Total, NFound]),
    forall(member(M, Found), ( record_get(M, value, T), format("  ~s~n", [T]) )),
    record_get(R, recursion, Rec),
    record_get(Rec, calls, Calls), record_get(Rec, depth, Depth),
    format("recursion: ~d child plan, depth ~d~n", [Calls, Depth]),
    record_get(R, used, Used),
    record_get(Used, context_ops, UsedOps), record_get(Used, steps, Steps),
    format("used: ~d steps, ~d context operations~n", [Steps, UsedOps]),
    context_delete(H, ok(_)),
    context_adapter_unregister(kb, ok(_)).
