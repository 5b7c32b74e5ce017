% Suite for lib/rlm_warm.pl: the upstream warm and runtime cases in our
% record shapes.
:- set_prolog_flag(double_quotes, chars).
:- dynamic(generated_/1).

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

kinds_(W, Kinds) :- record_get(W, variants, Vs), findall(K, ( member(V, Vs), record_get(V, kind, K) ), Kinds).

selected_(P, Pairs) :-
    record_get(P, selected, Sel),
    findall(Id-K, ( member(X, Sel), record_get(X, id, Id), record_get(X, kind, K) ), Pairs).

tight_([policy([max_context_tokens(60), provider_context_tokens(1000000), reserve_output_tokens(0),
                safety_margin_tokens(0), min_recent_turns(1)]),
        token_options([model('gpt-4o-2024-08-06')]), cold_history_boundary(false)]).

test(published_warm_context_preserves_exact_source_transcript,
     (   setup_(w1, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(W)),
         record_get(W, key, range_1_2), record_get(W, version, 1), record_get(W, source_sequences, [1, 2]),
         record_get(W, source_refs, [R1, R2]), record_get(R1, sequence, 1), record_get(R2, sequence, 2),
         record_get(R1, conversation_id, w1), conversation_message(C, 1, ok(Msg1)), record_get(Msg1, ref, R1),
         kinds_(W, [verbatim, detailed_summary, compact_summary, facts_only]),
         conversation_stats(C, ok(St)), record_get(St, messages, 3),
         long_(a, A), conversation_message(C, 1, ok(M1)), record_get(M1, content, A),
         conversation_warm_list(C, S, [], ok([L])), record_get(L, key, range_1_2)
     )).

test(recompaction_creates_new_artifact_version_without_rewriting_source,
     (   setup_(w2, S, C),
         conversation_warm_publish(C, S, range(1, 1), [generator(useful_)], ok(W1)), record_get(W1, version, 1),
         conversation_warm_publish(C, S, range(1, 1), [generator(useful_)], ok(W2)), record_get(W2, version, 2),
         conversation_warm_list(C, S, [history(true)], ok(All)), length(All, 2),
         conversation_warm_list(C, S, [], ok([Latest])), record_get(Latest, version, 2),
         long_(a, A), conversation_message(C, 1, ok(M1)), record_get(M1, content, A)
     )).

test(public_context_pack_loads_existing_warm_without_manual_context_units,
     (   setup_(w3, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         tight_(O0),
         conversation_context_pack(C, [warm_store(S), warm_options([policy([max_candidates(8)])])|O0], ok(P)),
         record_get(P, warm_context_status, WS), record_get(WS, configured, true), record_get(WS, loaded_units, 1),
         selected_(P, Pairs),
         memberchk(conversation_message_3-verbatim, Pairs), memberchk(range_1_2-compact_summary, Pairs),
         \+ memberchk(conversation_message_1-_, Pairs), \+ memberchk(conversation_message_2-_, Pairs),
         record_get(P, ledger, L), record_get(L, total_tokens, T), T =< 60
     )).

test(no_warm_store_means_no_warm_generation_or_loading,
     (   setup_(w4, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         retractall(generated_(_)),
         tight_(O), conversation_context_pack(C, O, ok(P)),
         record_get(P, warm_context_status, WS), record_get(WS, configured, false), record_get(WS, loaded_units, 0),
         record_get(P, selected, Sel), \+ ( member(X, Sel), record_get(X, section, warm) ),
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
         conversation_warm_context_units(C, S, [], [policy([max_candidates(8)])], ok(Units)),
         Units = [U], record_get(U, excludes, [conversation_message_1, conversation_message_2]),
         tight_(O), conversation_context_pack(C, [context_units(Units)|O], ok(P)),
         selected_(P, Pairs), memberchk(range_1_2-compact_summary, Pairs),
         \+ memberchk(conversation_message_1-_, Pairs)
     )).

test(direct_reference_signal_beats_irrelevant_recency,
     (   setup_(w7, S, C),
         conversation_warm_publish(C, S, range(1, 1), [generator(useful_)], ok(_)),
         conversation_warm_publish(C, S, range(2, 2), [generator(useful_)], ok(_)),
         conversation_warm_context_units(C, S, [warm_signal(range_1_1, direct_reference, 10)],
                                         [policy([max_candidates(1)])], ok([U])),
         record_get(U, id, range_1_1)
     )).

test(json_text_from_a_generator,
     (   setup_(w8, _S, C),
         conversation_warm_derive(C, range(1, 2), [generator(json_)], ok(W)),
         record_get(W, fields, F), record_get(F, summary, "from json"), record_get(F, facts, ["f"])
     )).

test(malformed_generator_output_fails_closed,
     (   setup_(w9, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(summary_only_)], error(E)),
         record_get(E, kind, missing_required_field), record_get(E, field, decisions), record_get(E, phase, publish),
         conversation_warm_list(C, S, [], ok([]))
     )).

test(failing_and_throwing_generators_are_outcomes,
     (   setup_(w10, _S, C),
         conversation_warm_derive(C, range(1, 2), [generator(failing_)], error(E1)), record_get(E1, kind, generator_failed),
         conversation_warm_derive(C, range(1, 2), [generator(throwing_)], error(E2)), record_get(E2, kind, generator_exception)
     )).

test(artifacts_live_in_the_conversations_store,
     (   setup_(w11, _S, C),
         conversation_store_open(memory, ok(Other)),
         conversation_warm_publish(C, Other, range(1, 2), [generator(useful_)], error(E)),
         record_get(E, kind, warm_store_mismatch)
     )).

test(range_beyond_the_conversation_is_an_outcome,
     (   setup_(w12, _S, C),
         conversation_warm_derive(C, range(2, 9), [generator(useful_)], error(E)),
         record_get(E, kind, empty_source_range)
     )).

test(unknown_signal_kind_is_an_outcome,
     (   setup_(w13, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         conversation_warm_context_units(C, S, [warm_signal(range_1_2, gossip, 1)], [], error(E)),
         record_get(E, kind, unsupported_signal_kind)
     )).

test(default_policy_and_schema,
     (   default_warm_policy(warm_policy(P)), memberchk(max_candidates(32), P),
         memberchk(fidelity(F), P), memberchk(compact_summary(70), F),
         warm_context_schema(warm_context_schema(Fs)), length(Fs, 8)
     )).

% The rlm generator: a planner reads the range through the handle only and
% answers the schema's JSON; the usage lands in the provenance.
rlm_planner_(Req, plan([context(input(context), slice(0, 2), items),
                        final(literal("{\"summary\":\"s\",\"decisions\":[\"d\"],\"facts\":[],\"unresolved\":[],\"entities\":[],\"topics\":[],\"files\":[],\"symbols\":[]}"))])) :-
    record_get(Req, prompt, P), append(_, R, P), append("Summarize messages 1..2", _, R), !,
    \+ ( append(_, R2, P), append("aaaa", _, R2) ).   % the range is not in the prompt

test(rlm_generator_reads_the_range_through_a_handle,
     (   setup_(w_rlm, _, C),
         conversation_warm_derive(C, range(1, 2), [generator(rlm), completion_options([planner_handler(rlm_planner_)])], ok(W)),
         record_get(W, fields/summary, "s"),
         record_get(W, generation/kind, rlm),
         record_get(W, generation/usage/model_calls, 1)
     )).

test(artifact_store_by_name_is_the_conversations_store,
     (   setup_(w_named, S, C),
         artifact_store_open(C, ok(W1)), W1 == S,
         artifact_store_open(S, ok(W2)), W2 == S,
         conversation_warm_publish(C, W1, range(1, 2), [generator(useful_)], ok(A)),
         record_get(A, key, range_1_2),
         % Each open took a reference: closing them leaves the store open.
         artifact_store_close(W1, ok(closed)), artifact_store_close(W2, ok(closed)),
         conversation_warm_list(C, S, [], ok([_])),
         conversation_store_close(S, ok(closed)),
         artifact_store_close(S, error(E)), record_get(E, detail, closed_store)
     )).

% Upstream's separate artifact store: artifact_store_open/2 from a spec
% gives a store for the artifacts of any conversation, which publish,
% list, units and packs name; the conversation's own store holds none.
test(a_separate_artifact_store_serves_as_the_warm_store,
     (   setup_(w_sep, S, C),
         artifact_store_open(memory, ok(A)), A = artifact_store(_),
         conversation_warm_list(C, A, [], ok([])),
         conversation_warm_publish(C, A, range(1, 2), [generator(useful_)], ok(W)),
         record_get(W, version, 1), record_get(W, ref/version, 1),
         conversation_warm_list(C, A, [], ok([L])), record_get(L, ref, Ref), record_get(W, artifact/ref, Ref),
         conversation_warm_list(C, S, [], ok([])),
         conversation_warm_context_units(C, A, [], [], ok([U])), record_get(U, id, range_1_2),
         tight_(O), conversation_context_pack(C, [warm_store(A)|O], ok(P)),
         record_get(P, warm/loaded_units, 1),
         selected_(P, Pairs), memberchk(range_1_2-compact_summary, Pairs),
         conversation_context_pack(C, O, ok(P0)), record_get(P0, warm/configured, false),
         artifact_store_close(A, ok(closed)),
         conversation_warm_list(C, A, [], error(E)), record_get(E, detail, closed_store)
     )).

% A conversation store other than the conversation's own is no warm store:
% a mistaken store is an error, not an empty one.
test(another_conversation_store_is_no_warm_store,
     (   setup_(w_other, _S, C),
         conversation_store_open(memory, ok(Other)),
         conversation_warm_list(C, Other, [], error(E)), record_get(E, kind, warm_store_mismatch)
     )).

test(publish_counts_the_encoding_token_options_name,
     (   setup_(w_enc, S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_), token_options([encoding(p50k_base)])], ok(W)),
         record_get(W, variants, [V|_]), record_get(V, token_counts, Counts), record_get(Counts, p50k_base, N),
         integer(N), N > 0,
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_), token_options([token_counter(length)])], ok(_)),
         catch(conversation_warm_publish(C, S, range(1, 2), [generator(useful_), token_options([bogus(1)])], _), Err, true),
         Err = error(domain_error(token_count_text_option, bogus(1)), _)
     )).
test(artifact_store_spec_type, [throws(error(type_error(conversation_store_spec, 42), artifact_store_open/2))],
     artifact_store_open(42, _)).

% Upstream's tight-budget case as it runs on its lower-level pack, which
% has no cold-history boundary: a character counter, 150 tokens, a
% separate artifact store and the units passed explicitly.
chars_(Text, N) :- length(Text, N).
test(upstreams_tight_budget_case_without_the_boundary,
     (   setup_(w_up, _S, C),
         artifact_store_open(memory, ok(A)),
         Count = token_options([token_counter(chars_)]),
         conversation_warm_publish(C, A, range(1, 2), [generator(useful_), Count], ok(_)),
         conversation_warm_context_units(C, A, [], [policy(dict([max_candidates(8)]))], ok(Units)),
         Policy = context_policy([max_context_tokens(150), min_recent_turns(1), overflow(deny),
                                  provider_context_tokens(1000000), reserve_output_tokens(10), safety_margin_tokens(5)]),
         conversation_context_pack(C, [policy(Policy), Count, context_units(Units), cold_history_boundary(false)], ok(P)),
         selected_(P, Pairs),
         memberchk(conversation_message_3-verbatim, Pairs), memberchk(range_1_2-compact_summary, Pairs),
         \+ memberchk(conversation_message_1-_, Pairs), \+ memberchk(conversation_message_2-_, Pairs),
         record_get(P, ledger/total_tokens, T), T =< 150
     )).
