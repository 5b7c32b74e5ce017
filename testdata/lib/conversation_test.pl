% Suite for lib/rlm_conversation.pl: the upstream conversation scenarios.
:- set_prolog_flag(double_quotes, chars).

conv_(C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(test_conversation)], ok(C)).

seqs_(Records, Seqs) :- findall(N, (member(R, Records), record_get(R, sequence, N)), Seqs).

test(full_transcript_is_append_only_and_ordered,
     (   conv_(C),
         conversation_append(C, message(user, "first"), ok(R1)), record_get(R1, sequence, 1),
         conversation_append(C, message(assistant, "second"), ok(R2)), record_get(R2, sequence, 2),
         conversation_append(C, message(user, "third"), ok(_)),
         conversation_messages(C, all, [], ok(All)), seqs_(All, [1,2,3]),
         conversation_message(C, 2, ok(M2)), record_get(M2, content, "second")
     )).

test(store_lists_reopenable_conversations,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(alpha), metadata([project("one")])], ok(_)),
         conversation_create(S, [id(beta), metadata([project("two")])], ok(_)),
         conversation_list(S, [order(asc)], ok(L)),
         findall(I, (member(X, L), record_get(X, id, I)), Ids), msort(Ids, [alpha, beta]),
         conversation_list(S, [order(desc), limit(1)], ok([One])), record_get(One, id, OneId),
         memberchk(OneId, [alpha, beta]),
         conversation_open(S, alpha, ok(A)), record_get(A, metadata, M), record_get(M, project, "one")
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
         record_get(E, phase, messages), record_get(E, kind, conversation_error)
     )).

test(bad_selector_is_a_domain_error,
     [throws(error(domain_error(conversation_selector, latest(3)), conversation_messages/4))],
     (   conv_(C),
         conversation_messages(C, latest(3), [], _)
     )).

test(bad_messages_write_nothing,
     (   conv_(C),
         conversation_append(C, message(wizard, "x"), error(E1)), record_get(E1, phase, append),
         conversation_append(C, message(user, [text("a"), video("b")]), error(E2)),
         record_get(E2, detail, invalid_message(_)),
         conversation_stats(C, ok(St)), record_get(St, messages, 0)
     )).

test(idempotent_retry_returns_the_original,
     (   conv_(C),
         conversation_append(C, message(user, "once"), [idempotency_key(k1)], ok(R1)),
         conversation_append(C, message(user, "once"), [idempotency_key(k1)], ok(R2)),
         record_get(R1, sequence, 1), record_get(R2, sequence, 1),
         conversation_stats(C, ok(St)), record_get(St, messages, 1),
         conversation_append(C, message(user, "other"), [idempotency_key(k1)], error(E)),
         record_get(E, detail, idempotency_key_reused)
     )).

test(duplicate_id_is_conversation_exists,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(x)], ok(_)),
         conversation_create(S, [id(x)], error(E)), record_get(E, detail, conversation_exists(x))
     )).

test(unknown_conversation_is_not_found,
     (   conversation_store_open(memory, ok(S)),
         conversation_open(S, nope, error(E)), record_get(E, detail, not_found(nope))
     )).

test(parts_tool_calls_and_names_survive_storage,
     (   conv_(C),
         conversation_append(C, message([role(assistant), content(""),
                                         tool_calls([tool_call([id(call_1), name(lookup), arguments('{"q":"x"}')])])]), ok(_)),
         conversation_append(C, message([role(tool), tool_call_id(call_1), content("result – ok")]), ok(_)),
         conversation_append(C, message(user, [text("look"), image_url("http://x/y.png", high)]), ok(_)),
         conversation_message(C, 1, ok(M1)), record_get(M1, message, N1), record_get(N1, tool_calls, [TC]),
         record_get(TC, name, lookup),
         conversation_message(C, 2, ok(M2)), record_get(M2, message, N2), record_get(N2, tool_call_id, call_1),
         record_get(M2, content, "result – ok"),
         conversation_message(C, 3, ok(M3)), record_get(M3, content, [text("look"), image_url(U, high)]),
         U == "http://x/y.png"
     )).

test(stats_are_counters,
     (   conv_(C),
         conversation_append(C, message(system, "rule"), ok(_)),
         conversation_append(C, message(user, "hello"), ok(_)),
         conversation_stats(C, ok(S)),
         record_get(S, messages, 2), record_get(S, user_messages, 1), record_get(S, system_messages, 1)
     )).

test(full_export_keeps_original_payloads,
     (   conv_(C),
         conversation_append(C, message(system, "project rule"), ok(_)),
         conversation_append(C, message(user, "hello"), ok(_)),
         conversation_export(C, term, ok(X)), record_get(X, messages, [A, B]),
         record_get(A, role, system), record_get(A, content, "project rule"),
         record_get(B, role, user), record_get(B, content, "hello"),
         conversation_export(C, jsonl, ok(J)), atom_chars(JA, J),
         sub_atom(JA, 0, _, _, '{"role":"system"')
     )).

test(token_counts_recorded_at_append,
     (   conv_(C),
         conversation_append(C, message(user, "hello world"), ok(R)),
         record_get(R, token_counts, TC), record_get(TC, o200k_base, 2)
     )).

test(closed_store_is_structured,
     (   conversation_store_open(memory, ok(S)),
         conversation_store_close(S, ok(closed)),
         conversation_create(S, [], error(E)), record_get(E, detail, closed_store)
     )).

% Search: what a message is said about (time, session, metadata, an image's
% caption) is kept, filtered and searched; a hit can bring its neighbours.
envelope_conv_(C) :-
    conv_(C),
    conversation_append(C, message(user, "which port does the staging database use?"),
                        [session(s1), time('2023-05-08'), metadata([source("chat")])], ok(R1)),
    record_get(R1, session, "s1"), record_get(R1, time, 1683504000000),
    record_get(R1, metadata/source, "chat"),
    conversation_append(C, message(assistant, "5433 since the migration"), [session(s1), time(1683504060000)], ok(_)),
    conversation_append(C, message([role(user), content([text("look"), image_url("https://x/y.png", low, "a red fox asleep on the porch")])]),
                        [session(s2), time('2023-06-01T10:00:00Z')], ok(R3)),
    record_get(R3, content, [_, image_url(_, low, "a red fox asleep on the porch")]).

hit_seqs_(C, Q, Opts, Seqs) :-
    conversation_search(C, Q, Opts, ok(Hits)), seqs_(Hits, Seqs).

test(search_keeps_what_a_message_is_said_about,
     (   envelope_conv_(C),
         hit_seqs_(C, "fox", [], [3]),                       % the caption is searched
         hit_seqs_(C, "foxes sleeping", [], [3]),            % stemmed
         hit_seqs_(C, "staging database", [roles([assistant])], []),
         hit_seqs_(C, "staging database", [session(s2)], []),
         hit_seqs_(C, "staging database", [since('2023-05-01'), until('2023-05-09')], [1]),
         hit_seqs_(C, "staging database", [since('2023-05-09')], []),
         conversation_search(C, "staging database", [window(1)], ok([H|_])),
         record_get(H, window, [W]), record_get(W, content, "5433 since the migration"),
         record_get(H, lift, _), record_get(H, score, S), S > 0
     )).

test(search_options_are_checked,
     (   envelope_conv_(C),
         catch((conversation_search(C, "x", [roles([boss])], _), fail), error(domain_error(role, boss), _), true),
         catch((conversation_search(C, "x", [since(yesterday)], _), fail), error(domain_error(time, yesterday), _), true),
         conversation_search(C, "x", [window(51)], error(E)),
         record_get(E, detail, invalid_argument(window))
     )).

test(a_store_without_stemming_matches_words_as_written,
     (   conversation_store_open(persist(plain_words, [language(none)]), ok(S)),
         conversation_create(S, [], ok(C)),
         conversation_append(C, message(user, "the fox sleeps"), ok(_)),
         conversation_search(C, "foxes", [], ok([])),
         conversation_search(C, "fox", [], ok([_])),
         conversation_store_close(S, ok(closed))
     )).

test(wait_returns_what_came_after_a_sequence,
     (   conv_(C),
         conversation_append(C, message(user, "first"), ok(_)),
         conversation_append(C, message(assistant, "second"), ok(_)),
         conversation_wait(C, 0, [limit(1)], ok([R1])), record_get(R1, sequence, 1),
         conversation_wait(C, 1, [timeout(5)], ok([R2])), record_get(R2, content, "second"),
         conversation_wait(C, 2, [timeout(0.05)], ok([]))
     )).

test(wait_checks_its_arguments, [throws(error(type_error(positive_number, 0), _))],
     (   conv_(C),
         conversation_wait(C, 0, [timeout(0)], _)
     )).

% Metadata may be upstream's dict: a record Tag([...]) as well as a list.
test(metadata_may_be_a_record,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(rec), metadata(dict([project("one")]))], ok(_)),
         conversation_open(S, rec, ok(C)), record_get(C, metadata, M), record_get(M, project, "one"),
         catch(conversation_create(S, [metadata(42)], _), E, true), E = error(type_error(list, 42), _)
     )).
