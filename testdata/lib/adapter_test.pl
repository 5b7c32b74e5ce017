% Suite for lib/rlm_context_adapter.pl: context backends written in
% Prolog, bounded by the same registry as built-in handles.
:- set_prolog_flag(double_quotes, chars).

kb_fact(0, "alpha needle one").
kb_fact(1, "beta").
kb_fact(2, "gamma needle two").
kb_fact(3, "delta needle three").

kb_meta(kb(Name), [kind(facts), items(N), source_id(Name)]) :-
    aggregate_all(count, kb_fact(_, _), N).
big_meta(_, [kind(facts), blob(B)]) :- length(L, 4096), maplist(=(x), L), atom_chars(B, L).

kb_op(search(P), _, _, [value(Ms), items_inspected(N), truncated(false)]) :-
    findall(match([index(I), value(T)]), (kb_fact(I, T), sub_string(T, _, _, _, P)), Ms),
    aggregate_all(count, kb_fact(_, _), N).
kb_op(peek(head(K)), _, _, [value(Ts)]) :-
    findall(T, (kb_fact(I, T), I < K), Ts).
kb_op(reduce(count), _, _, [value(N)]) :-
    aggregate_all(count, kb_fact(_, _), N).

failing_op(_, _, _, _) :- fail.
bad_work_op(_, _, _, [value(_)]).

reg_(Name, Ops, H) :-
    context_adapter_register(Name, [operations(Ops)], kb_meta, kb_op, ok(_)),
    context_register_adapter(Name, kb(Name), [], ok(R)), record_get(R, handle, H).

test(register_then_same_definition_is_existing,
     (   context_adapter_register(kb_a, [operations([search])], kb_meta, kb_op, O1),
         O1 == ok(registered(kb_a)),
         context_adapter_register(kb_a, [operations([search])], kb_meta, kb_op, O2),
         O2 == ok(existing(kb_a))
     )).
test(another_definition_is_a_conflict,
     (   context_adapter_register(kb_b, [operations([search])], kb_meta, kb_op, ok(_)),
         context_adapter_register(kb_b, [operations([search, peek])], kb_meta, kb_op, error(E)),
         record_get(E, kind, adapter_conflict)
     )).
test(no_operations_is_invalid,
     (   context_adapter_register(kb_c, [operations([])], kb_meta, kb_op, error(E)),
         record_get(E, kind, invalid_adapter)
     )).
test(unknown_operation_is_invalid,
     (   context_adapter_register(kb_c2, [operations([teleport])], kb_meta, kb_op, error(E)),
         record_get(E, kind, invalid_adapter)
     )).
test(handler_must_be_callable, [throws(error(type_error(callable, 42), context_adapter_register/5))],
     context_adapter_register(kb_c3, [operations([search])], 42, kb_op, _)).
test(metadata_is_the_adapters_and_backend_is_a_term,
     (   reg_(kb_d, [search], H),
         context_metadata(H, ok(R)), record_get(R, metadata, M),
         record_get(M, backend, B), B == adapter(kb_d),
         record_get(M, kind, facts), record_get(M, items, 4),
         record_get(M, source/source_id, kb_d)
     )).
test(search_goes_through_the_callback,
     (   reg_(kb_e, [search], H),
         context_search(H, "needle", [], ok(R)),
         record_get(R, value, Ms), length(Ms, 3), record_get(R, truncated, false)
     )).
test(adapter_output_is_rebounded_by_core_limits,
     (   reg_(kb_f, [search], H),
         context_search(H, "needle", [max_results(1)], ok(R)),
         record_get(R, value, [M]), record_get(M, index, 0),
         record_get(R, truncated, true)
     )).
test(undeclared_operation_is_denied,
     (   reg_(kb_g, [search], H),
         context_slice(H, 0, 2, [], error(E)), record_get(E, kind, capability_denied)
     )).
test(peek_metadata_needs_no_callback,
     (   reg_(kb_g2, [search], H),
         context_peek(H, metadata, [], ok(R)), record_get(R, value, M), record_get(M, items, 4)
     )).
test(oversized_metadata_is_rejected_before_a_handle_exists,
     (   context_adapter_register(kb_h, [operations([search])], big_meta, kb_op, ok(_)),
         context_register_adapter(kb_h, src, [max_bytes(512), time_limit(10)], error(E)),
         record_get(E, kind, adapter_metadata_too_large), record_get(E, max_bytes, 512),
         record_get(E, bytes, N), N > 512,
         context_adapter_unregister(kb_h, ok(unregistered(kb_h)))
     )).
test(live_handle_prevents_unregistration,
     (   reg_(kb_i, [search], H),
         context_adapter_unregister(kb_i, error(E)), record_get(E, kind, adapter_in_use),
         context_delete(H, ok(_)),
         context_adapter_unregister(kb_i, O), O == ok(unregistered(kb_i))
     )).
test(unregister_unknown_is_an_outcome,
     (   context_adapter_unregister(nobody_here, error(E)), record_get(E, kind, adapter_not_registered) )).
test(failing_callback_is_an_outcome,
     (   context_adapter_register(kb_j, [operations([search])], kb_meta, failing_op, ok(_)),
         context_register_adapter(kb_j, kb(j), [], ok(R)), record_get(R, handle, H),
         context_search(H, "x", [], error(E)), record_get(E, kind, adapter_operation_failed)
     )).
test(non_ground_work_is_invalid,
     (   context_adapter_register(kb_k, [operations([search])], kb_meta, bad_work_op, ok(_)),
         context_register_adapter(kb_k, kb(k), [], ok(R)), record_get(R, handle, H),
         context_search(H, "x", [], error(E)), record_get(E, kind, invalid_adapter_work)
     )).
slow_meta(_, [kind(slow)]) :- repeat, fail.
test(slow_metadata_is_a_time_limit_outcome,
     (   context_adapter_register(kb_t, [operations([search])], slow_meta, kb_op, ok(_)),
         context_register_adapter(kb_t, src, [time_limit(0.05)], error(E)),
         record_get(E, kind, time_limit_exceeded)
     )).
test(non_ground_source_is_an_outcome,
     (   context_adapter_register(kb_l, [operations([search])], kb_meta, kb_op, ok(_)),
         context_register_adapter(kb_l, kb(_), [], error(E)), record_get(E, kind, invalid_adapter_source)
     )).
test(ordinary_registration_cannot_install_an_adapter,
     (   context_register(adapter(kb_a, kb(x)), [], error(E)), record_get(E, kind, unsupported_source) )).
test(info_reports_declared_capabilities,
     (   context_adapter_register(kb_m, [operations([search, peek]), persistent(true)], kb_meta, kb_op, ok(_)),
         context_adapter_info(kb_m, ok(I)), record_get(I, capabilities, C),
         record_get(C, operations, [search, peek]), record_get(C, persistent, true),
         record_get(C, filesystem, false), record_get(C, network, false)
     )).
test(backend_of_memory_and_of_a_handle,
     (   context_backend(memory, M), record_get(M, filesystem, false), record_get(M, network, false),
         record_get(M, source_kinds, [text, terms]),
         reg_(kb_n, [search, reduce], H),
         context_backend(H, I), record_get(I, operations, [search, reduce]),
         context_backend(adapter(kb_n), I2), I2 == I,
         \+ context_backend(adapter(no_such), _)
     )).
test(issue_order_with_callbacks_list,
     (   context_adapter_register(kb_o, kb/[metadata(kb_meta), operation(kb_op)], [operations([reduce])],
                                  [description("facts")], O),
         O == ok(registered(kb_o)),
         context_register_adapter(kb_o, kb(o), [], ok(R)), record_get(R, handle, H),
         context_reduce(H, count, [], ok(V)), record_get(V, value, 4),
         context_adapter_info(kb_o, ok(I)), record_get(I, description, D), D == "facts"
     )).
test(plan_run_over_a_prolog_adapter,
     (   reg_(kb_p, [search, peek], H),
         plan_run(plan([context(input(context), search("needle"), hits), final(var(hits))]),
                  [context(search)], [], inputs([context(H)]), ok(R)),
         record_get(R, value, Ms), length(Ms, 3)
     )).
plan_search_(_, plan([context(input(context), search("two"), hits), final(var(hits))])).
test(completion_over_a_prolog_adapter,
     (   reg_(kb_q, [search], H),
         rlm_completion("find two", H, [planner_handler(plan_search_)], ok(R)),
         record_get(R, value, [M]), record_get(M, index, 2)
     )).
