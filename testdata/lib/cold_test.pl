% Suite for conversation_search/4 and conversation_cold_context/3: the
% upstream cold scenarios.
:- set_prolog_flag(double_quotes, chars).

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

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
         get_(selected, P, Sel), \+ ( member(X, Sel), get_(sequence, X, 1) ),
         conversation_cold_context(C, [], ok(Ref)),
         get_(metadata, Ref, M), get_(backend, M, 'adapter(conversation)'),
         get_(source, M, Src), get_(conversation_id, Src, cold_test),
         get_(handle, Ref, H),
         context_search(H, "ancient-needle", [max_results(4), max_bytes(4096)], ok(R)),
         get_(value, R, [Match]), get_(value, Match, View), get_(sequence, View, 1),
         get_(content, View, Content), atom_chars(CA, Content), sub_atom(CA, _, _, 0, 'ancient-needle'),
         context_delete(H, ok(_)),
         conversation_message(C, 1, ok(Msg)), get_(content, Msg, Old)
     )).

test(search_matches_content_not_roles,
     (   conv_(s1, ["the user said hi", "nothing here"], C),
         conversation_search(C, "user", [], ok(Hits)), length(Hits, 1),
         conversation_search(C, "assistant", [], ok([]))
     )).

test(ranked_search_orders_by_relevance,
     (   conv_(s2, ["the weather report mentions a lease once among many other words about rain and wind today",
                    "lease renewal: the lease holder keeps the lease", "unrelated words"], C),
         conversation_search(C, "lease", [], ok([First|_])), get_(sequence, First, 2)
     )).

test(exact_substring_mode,
     (   conv_(s3, ["CouchDB lease", "couchdb path"], C),
         conversation_search(C, "CouchDB", [case_sensitive(true)], ok([H])), get_(sequence, H, 1),
         conversation_search(C, "couchdb", [exact(true)], ok(Hs)), length(Hs, 2)
     )).

test(cold_peek_slice_and_out_of_range,
     (   conv_(s4, ["one", "two", "three"], C),
         conversation_cold_context(C, [], ok(Ref)), get_(handle, Ref, H),
         context_peek(H, head(2), [], ok(R1)), get_(value, R1, [V1, _]), get_(sequence, V1, 1),
         get_(truncated, R1, false),
         context_peek(H, tail(1), [], ok(R2)), get_(value, R2, [V3]), get_(sequence, V3, 3),
         context_peek(H, item(1), [], ok(R3)), get_(value, R3, V2), get_(sequence, V2, 2),
         context_slice(H, 1, 5, [max_results(1)], ok(R4)), get_(value, R4, [S2]), get_(sequence, S2, 2),
         get_(truncated, R4, true),
         context_peek(H, item(7), [], error(E)), get_(kind, E, out_of_range),
         context_slice(H, 9, 1, [], error(E2)), get_(kind, E2, out_of_range),
         context_partition(H, fixed(2), [], error(E3)), get_(kind, E3, capability_denied)
     )).

test(handles_cannot_reach_other_conversations,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(a)], ok(A)), conversation_append(A, message(user, "secret-a"), ok(_)),
         conversation_create(S, [id(b)], ok(B)), conversation_append(B, message(user, "public-b"), ok(_)),
         conversation_cold_context(B, [], ok(Ref)), get_(handle, Ref, H),
         context_search(H, "secret-a", [], ok(R)), get_(value, R, [])
     )).

test(cold_metadata_is_size_capped,
     (   conv_(s5, ["x"], C),
         conversation_cold_context(C, [max_bytes(10)], error(E)),
         get_(kind, E, adapter_metadata_too_large), get_(max_bytes, E, 10)
     )).

test(cold_metadata_has_no_payload,
     (   conv_(s6, ["payload-text"], C),
         conversation_cold_context(C, [], ok(Ref)), get_(metadata, Ref, M),
         get_(items, M, 1), get_(source, M, Src), get_(source_revision, Src, 1),
         \+ ( M = context_metadata(Ps), member(X, Ps), X = value(_) )
     )).

cold_planner_(_, plan([context(input(context), search("ancient-needle"), found), final(var(found))])).

test(a_plan_searches_cold_history_through_the_handle,
     (   needle_(Old),
         conv_(cold_plan, [Old, "middle"], C),
         conversation_cold_context(C, [], ok(Ref)),
         rlm_completion("find the old marker", Ref, [planner_handler(cold_planner_),
                                                     context_options([max_results(4), max_bytes(4096)])], ok(R)),
         get_(value, R, [M]), get_(value, M, View), get_(sequence, View, 1),
         get_(handle, Ref, H), context_delete(H, ok(_)),
         conversation_stats(C, ok(St)), get_(messages, St, 2)
     )).
