% Suite for conversation_search/4 and conversation_cold_context/3: the
% upstream cold scenarios.
:- set_prolog_flag(double_quotes, chars).

conv_(Id, Texts, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    forall(member(T, Texts), conversation_append(C, message(user, T), ok(_))).

needle_(T) :- length(L, 220), maplist(=(x), L), append(L, " ancient-needle", T).

test(old_evicted_turn_remains_searchable,
     (   needle_(Old),
         conv_(cold_test, [Old, "middle", "current"], C),
         conversation_context_pack(C, [policy([max_context_tokens(80), provider_context_tokens(1000000),
                                               reserve_output_tokens(10), safety_margin_tokens(5),
                                               min_recent_turns(1)]), cold_history_boundary(false)], ok(P)),
         record_get(P, selected, Sel), \+ ( member(X, Sel), record_get(X, sequence, 1) ),
         conversation_cold_context(C, [], ok(Ref)),
         record_get(Ref, metadata, M), record_get(M, backend, B), B == adapter(conversation),
         record_get(M, source, Src), record_get(Src, conversation_id, cold_test),
         record_get(Ref, handle, H),
         context_search(H, "ancient-needle", [max_results(4), max_bytes(4096)], ok(R)),
         record_get(R, value, [Match]), record_get(Match, value, View), record_get(View, sequence, 1),
         record_get(View, content, Content), atom_chars(CA, Content), sub_atom(CA, _, _, 0, 'ancient-needle'),
         context_delete(H, ok(_)),
         conversation_message(C, 1, ok(Msg)), record_get(Msg, content, Old)
     )).

test(search_matches_content_not_roles,
     (   conv_(s1, ["the user said hi", "nothing here"], C),
         conversation_search(C, "user", [], ok(Hits)), length(Hits, 1),
         conversation_search(C, "assistant", [], ok([]))
     )).

test(ranked_search_orders_by_relevance,
     (   conv_(s2, ["the weather report mentions a lease once among many other words about rain and wind today",
                    "lease renewal: the lease holder keeps the lease", "unrelated words"], C),
         conversation_search(C, "lease", [], ok([First|_])), record_get(First, sequence, 2)
     )).

test(exact_substring_mode,
     (   conv_(s3, ["CouchDB lease", "couchdb path"], C),
         conversation_search(C, "CouchDB", [case_sensitive(true)], ok([H])), record_get(H, sequence, 1),
         conversation_search(C, "couchdb", [exact(true)], ok(Hs)), length(Hs, 2)
     )).

test(cold_peek_slice_and_out_of_range,
     (   conv_(s4, ["one", "two", "three"], C),
         conversation_cold_context(C, [], ok(Ref)), record_get(Ref, handle, H),
         context_peek(H, head(2), [], ok(R1)), record_get(R1, value, [V1, _]), record_get(V1, sequence, 1),
         record_get(R1, truncated, false),
         context_peek(H, tail(1), [], ok(R2)), record_get(R2, value, [V3]), record_get(V3, sequence, 3),
         context_peek(H, item(1), [], ok(R3)), record_get(R3, value, V2), record_get(V2, sequence, 2),
         context_slice(H, 1, 5, [max_results(1)], ok(R4)), record_get(R4, value, [S2]), record_get(S2, sequence, 2),
         record_get(R4, truncated, true),
         context_peek(H, item(7), [], error(E)), record_get(E, kind, out_of_range),
         context_slice(H, 9, 1, [], error(E2)), record_get(E2, kind, out_of_range),
         context_partition(H, fixed(2), [], error(E3)), record_get(E3, kind, capability_denied)
     )).

test(handles_cannot_reach_other_conversations,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(a)], ok(A)), conversation_append(A, message(user, "secret-a"), ok(_)),
         conversation_create(S, [id(b)], ok(B)), conversation_append(B, message(user, "public-b"), ok(_)),
         conversation_cold_context(B, [], ok(Ref)), record_get(Ref, handle, H),
         context_search(H, "secret-a", [], ok(R)), record_get(R, value, [])
     )).

test(cold_metadata_is_size_capped,
     (   conv_(s5, ["x"], C),
         conversation_cold_context(C, [max_bytes(10)], error(E)),
         record_get(E, kind, adapter_metadata_too_large), record_get(E, max_bytes, 10)
     )).

test(cold_metadata_has_no_payload,
     (   conv_(s6, ["payload-text"], C),
         conversation_cold_context(C, [], ok(Ref)), record_get(Ref, metadata, M),
         record_get(M, items, 1), record_get(M, source, Src), record_get(Src, source_revision, 1),
         \+ ( M = context_metadata(Ps), member(X, Ps), X = value(_) )
     )).

cold_planner_(_, plan([context(input(context), search("ancient-needle"), found), final(var(found))])).

test(a_plan_searches_cold_history_through_the_handle,
     (   needle_(Old),
         conv_(cold_plan, [Old, "middle"], C),
         conversation_cold_context(C, [], ok(Ref)),
         rlm_completion("find the old marker", Ref, [planner_handler(cold_planner_),
                                                     context_options([max_results(4), max_bytes(4096)])], ok(R)),
         record_get(R, value, [M]), record_get(M, value, View), record_get(View, sequence, 1),
         record_get(Ref, handle, H), context_delete(H, ok(_)),
         conversation_stats(C, ok(St)), record_get(St, messages, 2)
     )).

% doubled_(N, A0, A): A is A0 repeated 2^N times.
doubled_(0, A, A) :- !.
doubled_(N, A0, A) :- atom_concat(A0, A0, A1), N1 is N - 1, doubled_(N1, A1, A).

test(ranked_search_says_when_it_read_a_message_in_part,
     (   conversation_store_open(persist(long_messages), ok(S)),
         conversation_create(S, [], ok(C)),
         doubled_(17, 'early filler', Long),      % 1.5 MiB
         conversation_append(C, message(user, Long), ok(_)),
         conversation_append(C, message(user, "early and short"), ok(_)),
         conversation_search(C, "early", [], ok(Hits)), length(Hits, 2),
         forall(member(H, Hits),
                (   record_get(H, sequence, 1)
                ->  record_get(H, partial, true)
                ;   \+ record_get(H, partial, _)
                )),
         conversation_store_close(S, ok(closed))
     )).
