% Suite for lib/rlm_context.pl: the upstream context scenarios and limits.
:- set_prolog_flag(double_quotes, chars).

field_(Key, Record, Value) :-
    Record =.. [_, Props],
    Goal =.. [Key, Value],
    once(member(Goal, Props)).

handle_(Source, H) :-
    context_register(Source, [], ok(Ref)),
    field_(handle, Ref, H).

rows_(N, Text) :-
    findall(Line, (between(1, N, I), number_codes(I, Cs), atom_codes(A, Cs),
                   atom_concat('row-', A, R), atom_concat(R, ' needle payload\n', Line)), Lines),
    atomic_concat_all_(Lines, Text).

atomic_concat_all_([], '').
atomic_concat_all_([A|As], T) :- atomic_concat_all_(As, T0), atom_concat(A, T0, T).

test(large_text_stays_opaque_and_is_queryable,
     (   rows_(300, Text),
         context_register(text(Text), [], ok(Ref)),
         field_(metadata, Ref, M), field_(bytes, M, B), B > 5000,
         field_(kind, M, text),
         field_(handle, Ref, H),
         context_search(H, needle, [max_results(3), max_bytes(512)], ok(R)),
         field_(value, R, Ms), length(Ms, 3),
         field_(truncated, R, true),
         context_trace(H, 10, ok([E])),
         field_(bytes_inspected, E, BI), BI > 0
     )).

test(term_context_supports_peek_slice_map_and_reduce,
     (   handle_(terms([alpha(1), beta(2), gamma(3), delta(4)]), H),
         context_peek(H, item(1), [], ok(R1)), field_(value, R1, beta(2)),
         context_slice(H, 1, 2, [], ok(R2)), field_(value, R2, [beta(2), gamma(3)]),
         context_map(H, uppercase, [max_results(2)], ok(R3)),
         field_(value, R3, ["ALPHA(1)", "BETA(2)"]), field_(truncated, R3, true),
         context_reduce(H, count, [], ok(R4)), field_(value, R4, 4)
     )).

test(head_of_whole_text_is_not_truncated,
     (   handle_(text("alpha\nbeta"), H),
         context_peek(H, head(100), [], ok(R)),
         field_(truncated, R, false), field_(value, R, "alpha\nbeta")
     )).

test(unsupported_sources_cannot_dereference_filesystem,
     (   context_register(file('/etc/passwd'), [], error(E)),
         field_(kind, E, unsupported_source), field_(source_shape, E, file/1)
     )).

test(ordinary_registration_cannot_install_adapters,
     (   context_register(adapter(conversation, x), [], error(E)),
         field_(kind, E, unsupported_source)
     )).

test(unknown_handle_is_an_outcome,
     (   context_metadata(context_handle('00000000000000000000000000000000', 1), error(E)),
         field_(kind, E, unknown_handle)
     )).

test(malformed_handle_is_a_type_error,
     [throws(error(type_error(context_handle, not_a_handle), context_metadata/2))],
     context_metadata(not_a_handle, _)).

test(deleted_handle_becomes_stale,
     (   handle_(text("x"), H),
         context_delete(H, ok(_)),
         context_metadata(H, error(E)), field_(kind, E, stale_handle)
     )).

test(map_and_reduce_reject_callables,
     (   handle_(terms([a]), H),
         context_map(H, call(shell), [], error(E1)), field_(kind, E1, capability_denied),
         context_reduce(H, call(system), [], error(E2)), field_(kind, E2, capability_denied)
     )).

test(invalid_partition_size_is_structured,
     (   handle_(text("abc"), H),
         context_partition(H, fixed(0), [], error(E)), field_(kind, E, invalid_argument)
     )).

test(invalid_limits_fail_before_work,
     (   handle_(text("abc"), H),
         catch(context_peek(H, head(1), [max_bytes(0)], _), error(type_error(positive_integer, 0), _), true),
         context_trace(H, 10, ok([]))
     )).

test(unknown_option_is_a_domain_error,
     [throws(error(domain_error(context_peek_option, colour(red)), _))],
     (   handle_(text("abc"), H),
         context_peek(H, head(1), [colour(red)], _)
     )).

test(out_of_range_item_is_not_a_leaked_fault,
     (   handle_(terms([a]), H),
         context_peek(H, item(5), [], error(E)), field_(kind, E, out_of_range)
     )).

test(search_pages_with_cursor,
     (   handle_(text("hit 1\nhit 2\nhit 3\n"), H),
         context_search(H, hit, [max_results(2)], ok(R1)),
         field_(next, R1, N), N == 2, field_(truncated, R1, true),
         context_search(H, hit, [max_results(2), cursor(N)], ok(R2)),
         field_(value, R2, [M]), field_(index, M, 2), field_(truncated, R2, false)
     )).

test(trace_records_sequence,
     (   handle_(text("alpha\nbeta\ngamma"), H),
         context_peek(H, head(5), [], ok(_)),
         context_search(H, beta, [], ok(_)),
         context_trace(H, 10, ok([T1, T2])),
         field_(sequence, T1, 1), field_(sequence, T2, 2),
         field_(items_inspected, T2, I), I > 0
     )).

test(metadata_has_no_payload,
     (   handle_(text("secret payload"), H),
         context_metadata(H, ok(R)), field_(metadata, R, M),
         \+ ( M = context_metadata(Props), member(value(_), Props) ),
         field_(operations, M, Ops), memberchk_ok_(search, Ops)
     )).

memberchk_ok_(X, L) :- once(member(X, L)).

% Upstream's results carry the operation's trace event, the one
% context_trace/3 lists.
test(result_carries_its_trace_event,
     (   handle_(text("alpha\nbeta\ngamma"), H),
         context_search(H, "beta", [], ok(R)),
         record_get(R, trace, T), record_get(T, operation, search), record_get(T, sequence, 1),
         record_get(T, items_inspected, I), I > 0, record_get(T, truncated, false),
         context_trace(H, 10, ok([T1])), record_get(T1, sequence, 1), record_get(T1, items_inspected, I)
     )).
