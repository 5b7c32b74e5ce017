% Suite for lib/rlm_warm.pl: the upstream warm and runtime cases in our
% record shapes.
:- set_prolog_flag(double_quotes, chars).
:- dynamic(generated_/1).

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

useful_(_Source, _Opts, warm_context([summary("compact useful summary"), decisions(["d1", "d2", "d3"]),
                                      facts(["f1", "f2", "f3"]), unresolved(["next task"]),
                                      entities(["e1", "e2"]), topics(["t1", "t2"]), files(["a.go", "b.go"]),
                                      symbols(["S1", "S2"])])) :-
    assertz(generated_(yes)).
json_(_Source, _Opts, "{\"summary\":\"from json\",\"decisions\":[],\"facts\":[\"f\"],\"unresolved\":[],\"entities\":[],\"topics\":[],\"files\":[],\"symbols\":[]}").
summary_only_(_Source, _Opts, warm_context([summary("only")])).
failing_(_Source, _Opts, _) :- fail.
throwing_(_Source, _Opts, _) :- throw(generator_broke).

long_(C, T) :- length(L, 150), maplist(=(C), L), T = L.

% Two 150-character messages and "current", in a memory store.
setup_(Id, S, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    long_(a, A), long_(b, B),
    conversation_append(C, message(user, A), ok(_)),
    conversation_append(C, message(assistant, B), ok(_)),
    conversation_append(C, message(user, "current"), ok(_)).

kinds_(W, Kinds) :- get_(variants, W, Vs), findall(K, ( member(V, Vs), get_(kind, V, K) ), Kinds).

selected_(P, Pairs) :-
    get_(selected, P, Sel),
    findall(Id-K, ( member(X, Sel), get_(id, X, Id), get_(kind, X, K) ), Pairs).

tight_([policy([max_context_tokens(60), provider_context_tokens(1000000), reserve_output_tokens(0),
                safety_margin_tokens(0), min_recent_turns(1)]),
        token_options([model('gpt-4o-2024-08-06')]), cold_history_boundary(false)]).

test(published_warm_context_preserves_exact_source_transcript,
     (   setup_(w1, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(W)),
         get_(key, W, range_1_2), get_(version, W, 1), get_(source_refs, W, [1, 2]),
         kinds_(W, [verbatim, detailed_summary, compact_summary, facts_only]),
         conversation_stats(C, ok(St)), get_(messages, St, 3),
         long_(a, A), conversation_message(C, 1, ok(M1)), get_(content, M1, A),
         conversation_warm_list(C, S, [], ok([L])), get_(key, L, range_1_2)
     )).

test(recompaction_creates_new_artifact_version_without_rewriting_source,
     (   setup_(w2, S, C),
         conversation_warm_publish(C, S, range(1, 1), [generator(useful_)], ok(W1)), get_(version, W1, 1),
         conversation_warm_publish(C, S, range(1, 1), [generator(useful_)], ok(W2)), get_(version, W2, 2),
         conversation_warm_list(C, S, [history(true)], ok(All)), length(All, 2),
         conversation_warm_list(C, S, [], ok([Latest])), get_(version, Latest, 2),
         long_(a, A), conversation_message(C, 1, ok(M1)), get_(content, M1, A)
     )).

test(public_context_pack_loads_existing_warm_without_manual_context_units,
     (   setup_(w3, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         tight_(O0),
         conversation_context_pack(C, [warm_store(S), warm_options([policy([max_candidates(8)])])|O0], ok(P)),
         get_(warm_context_status, P, WS), get_(configured, WS, true), get_(loaded_units, WS, 1),
         selected_(P, Pairs),
         memberchk(conversation_message_3-verbatim, Pairs), memberchk(range_1_2-compact_summary, Pairs),
         \+ memberchk(conversation_message_1-_, Pairs), \+ memberchk(conversation_message_2-_, Pairs),
         get_(ledger, P, L), get_(total_tokens, L, T), T =< 60
     )).

test(no_warm_store_means_no_warm_generation_or_loading,
     (   setup_(w4, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         retractall(generated_(_)),
         tight_(O), conversation_context_pack(C, O, ok(P)),
         get_(warm_context_status, P, WS), get_(configured, WS, false), get_(loaded_units, WS, 0),
         get_(selected, P, Sel), \+ ( member(X, Sel), get_(section, X, warm) ),
         \+ generated_(_)
     )).

test(packs_never_call_the_generator,
     (   setup_(w5, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         retractall(generated_(_)),
         tight_(O), conversation_context_pack(C, [warm_store(S)|O], ok(_)),
         \+ generated_(_)
     )).

test(explicit_units_select_the_compact_representation,
     (   setup_(w6, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         conversation_warm_context_units(C, S, [], [policy([max_candidates(8)])], ok(R)),
         get_(units, R, Units), Units = [U], get_(excludes, U, [conversation_message_1, conversation_message_2]),
         tight_(O), conversation_context_pack(C, [context_units(Units)|O], ok(P)),
         selected_(P, Pairs), memberchk(range_1_2-compact_summary, Pairs),
         \+ memberchk(conversation_message_1-_, Pairs)
     )).

test(direct_reference_signal_beats_irrelevant_recency,
     (   setup_(w7, S, C),
         conversation_warm_publish(C, S, range(1, 1), [generator(useful_)], ok(_)),
         conversation_warm_publish(C, S, range(2, 2), [generator(useful_)], ok(_)),
         conversation_warm_context_units(C, S, [warm_signal(range_1_1, direct_reference, 10)],
                                         [policy([max_candidates(1)])], ok(R)),
         get_(units, R, [U]), get_(id, U, range_1_1)
     )).

test(json_text_from_a_generator,
     (   setup_(w8, _S, C),
         conversation_warm_derive(C, range(1, 2), [generator(json_)], ok(W)),
         get_(fields, W, F), get_(summary, F, "from json"), get_(facts, F, ["f"])
     )).

test(malformed_generator_output_fails_closed,
     (   setup_(w9, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(summary_only_)], error(E)),
         get_(kind, E, missing_required_field), get_(field, E, decisions), get_(phase, E, publish),
         conversation_warm_list(C, S, [], ok([]))
     )).

test(failing_and_throwing_generators_are_outcomes,
     (   setup_(w10, _S, C),
         conversation_warm_derive(C, range(1, 2), [generator(failing_)], error(E1)), get_(kind, E1, generator_failed),
         conversation_warm_derive(C, range(1, 2), [generator(throwing_)], error(E2)), get_(kind, E2, generator_exception)
     )).

test(artifacts_live_in_the_conversations_store,
     (   setup_(w11, _S, C),
         conversation_store_open(memory, ok(Other)),
         conversation_warm_publish(C, Other, range(1, 2), [generator(useful_)], error(E)),
         get_(kind, E, warm_store_mismatch)
     )).

test(range_beyond_the_conversation_is_an_outcome,
     (   setup_(w12, _S, C),
         conversation_warm_derive(C, range(2, 9), [generator(useful_)], error(E)),
         get_(kind, E, empty_source_range)
     )).

test(unknown_signal_kind_is_an_outcome,
     (   setup_(w13, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         conversation_warm_context_units(C, S, [warm_signal(range_1_2, gossip, 1)], [], error(E)),
         get_(kind, E, unsupported_signal_kind)
     )).

test(default_policy_and_schema,
     (   default_warm_policy(warm_policy(P)), memberchk(max_candidates(32), P),
         memberchk(fidelity(F), P), memberchk(compact_summary(70), F),
         warm_context_schema(warm_context_schema(Fs)), length(Fs, 8)
     )).
