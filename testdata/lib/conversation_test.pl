% Suite for lib/rlm_conversation.pl: the upstream conversation scenarios.
:- set_prolog_flag(double_quotes, chars).

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

conv_(C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(test_conversation)], ok(C)).

seqs_(Records, Seqs) :- findall(N, (member(R, Records), get_(sequence, R, N)), Seqs).

test(full_transcript_is_append_only_and_ordered,
     (   conv_(C),
         conversation_append(C, message(user, "first"), ok(R1)), get_(sequence, R1, 1),
         conversation_append(C, message(assistant, "second"), ok(R2)), get_(sequence, R2, 2),
         conversation_append(C, message(user, "third"), ok(_)),
         conversation_messages(C, all, [], ok(All)), seqs_(All, [1,2,3]),
         conversation_message(C, 2, ok(M2)), get_(content, M2, "second")
     )).

test(store_lists_reopenable_conversations,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(alpha), metadata([project("one")])], ok(_)),
         conversation_create(S, [id(beta), metadata([project("two")])], ok(_)),
         conversation_list(S, [order(asc)], ok(L)),
         findall(I, (member(X, L), get_(id, X, I)), Ids), msort(Ids, [alpha, beta]),
         conversation_list(S, [order(desc), limit(1)], ok([One])), get_(id, One, OneId),
         memberchk(OneId, [alpha, beta]),
         conversation_open(S, alpha, ok(A)), get_(metadata, A, M), get_(project, M, "one")
     )).

test(history_selectors_address_old_turns,
     (   conv_(C),
         conversation_append(C, message(user, "design the CouchDB lease path"), ok(_)),
         conversation_append(C, message(assistant, "use fencing tokens"), ok(_)),
         conversation_append(C, message(user, "now work on Tree-sitter"), ok(_)),
         conversation_messages(C, range(1, 2), [], ok(R)), length(R, 2),
         conversation_messages(C, recent(1), [], ok(Recent)), seqs_(Recent, [3]),
         conversation_messages(C, before(3), [limit(1)], ok(B)), seqs_(B, [1]),
         conversation_messages(C, after(1), [], ok(Af)), seqs_(Af, [2,3]),
         conversation_messages(C, around(2, 1), [], ok(Ar)), seqs_(Ar, [1,2,3]),
         conversation_messages(C, role(assistant), [], ok(Ro)), seqs_(Ro, [2])
     )).

test(inverted_range_fails_structurally,
     (   conv_(C),
         conversation_messages(C, range(3, 1), [], error(E)),
         get_(phase, E, messages), get_(kind, E, conversation_error)
     )).

test(bad_selector_is_a_domain_error,
     [throws(error(domain_error(conversation_selector, latest(3)), conversation_messages/4))],
     (   conv_(C),
         conversation_messages(C, latest(3), [], _)
     )).

test(bad_messages_write_nothing,
     (   conv_(C),
         conversation_append(C, message(wizard, "x"), error(E1)), get_(phase, E1, append),
         conversation_append(C, message(user, [text("a"), video("b")]), error(E2)),
         get_(detail, E2, invalid_message(_)),
         conversation_stats(C, ok(St)), get_(messages, St, 0)
     )).

test(idempotent_retry_returns_the_original,
     (   conv_(C),
         conversation_append(C, message(user, "once"), [idempotency_key(k1)], ok(R1)),
         conversation_append(C, message(user, "once"), [idempotency_key(k1)], ok(R2)),
         get_(sequence, R1, 1), get_(sequence, R2, 1),
         conversation_stats(C, ok(St)), get_(messages, St, 1),
         conversation_append(C, message(user, "other"), [idempotency_key(k1)], error(E)),
         get_(detail, E, idempotency_key_reused)
     )).

test(duplicate_id_is_conversation_exists,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(x)], ok(_)),
         conversation_create(S, [id(x)], error(E)), get_(detail, E, conversation_exists(x))
     )).

test(unknown_conversation_is_not_found,
     (   conversation_store_open(memory, ok(S)),
         conversation_open(S, nope, error(E)), get_(detail, E, not_found(nope))
     )).

test(parts_tool_calls_and_names_survive_storage,
     (   conv_(C),
         conversation_append(C, message([role(assistant), content(""),
                                         tool_calls([tool_call([id(call_1), name(lookup), arguments('{"q":"x"}')])])]), ok(_)),
         conversation_append(C, message([role(tool), tool_call_id(call_1), content("result – ok")]), ok(_)),
         conversation_append(C, message(user, [text("look"), image_url("http://x/y.png", high)]), ok(_)),
         conversation_message(C, 1, ok(M1)), get_(message, M1, N1), get_(tool_calls, N1, [TC]),
         get_(name, TC, lookup),
         conversation_message(C, 2, ok(M2)), get_(message, M2, N2), get_(tool_call_id, N2, call_1),
         get_(content, M2, "result – ok"),
         conversation_message(C, 3, ok(M3)), get_(content, M3, [text("look"), image_url(U, high)]),
         U == "http://x/y.png"
     )).

test(stats_are_counters,
     (   conv_(C),
         conversation_append(C, message(system, "rule"), ok(_)),
         conversation_append(C, message(user, "hello"), ok(_)),
         conversation_stats(C, ok(S)),
         get_(messages, S, 2), get_(user_messages, S, 1), get_(system_messages, S, 1)
     )).

test(full_export_keeps_original_payloads,
     (   conv_(C),
         conversation_append(C, message(system, "project rule"), ok(_)),
         conversation_append(C, message(user, "hello"), ok(_)),
         conversation_export(C, term, ok(X)), get_(messages, X, [A, B]),
         get_(role, A, system), get_(content, A, "project rule"),
         get_(role, B, user), get_(content, B, "hello"),
         conversation_export(C, jsonl, ok(J)), atom_chars(JA, J),
         sub_atom(JA, 0, _, _, '{"role":"system"')
     )).

test(token_counts_recorded_at_append,
     (   conv_(C),
         conversation_append(C, message(user, "hello world"), ok(R)),
         get_(token_counts, R, TC), get_(o200k_base, TC, 2)
     )).

test(closed_store_is_structured,
     (   conversation_store_open(memory, ok(S)),
         conversation_store_close(S, ok(closed)),
         conversation_create(S, [], error(E)), get_(detail, E, closed_store)
     )).
