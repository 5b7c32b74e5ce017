% Suite for overlapping warm summaries: two representations that cover a
% common message never go together, a summary wins only under pressure,
% and a retired artifact is no longer offered.
:- set_prolog_flag(double_quotes, chars).

ov_gen_(_Source, _Opts, warm_context([summary("short summary"), decisions([]), facts(["f"]),
                                      unresolved([]), entities([]), topics([]), files([]), symbols([])])).

% N user/assistant messages of about 40 tokens each, in a memory store.
ov_conv_(Id, N, S, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    length(L, 40), maplist(=('w '), L), atomic_list_concat(L, W),
    forall(between(1, N, I),
           (   (I mod 2 =:= 1 -> R = user ; R = assistant),
               atomic_list_concat([turn, I, ' ', W], T),
               conversation_append(C, message(R, T), ok(_))
           )).

% The ranges of the issue, scaled: 2-40, 25-50 and 41-50 (and 41-60,
% which reaches into the hot tail 57-60).
ov_publish_(C, S) :-
    forall(member(F-T, [2-40, 25-50, 41-50, 41-60]),
           conversation_warm_publish(C, S, range(F, T), [generator(ov_gen_)], ok(_))).

ov_options_(S, Max, [warm_store(S), cold_history_boundary(false), token_options([model('gpt-4o')]),
                     policy([max_context_tokens(Max), provider_context_tokens(Max), reserve_output_tokens(10),
                             safety_margin_tokens(10), min_recent_turns(4)])]).

ov_selected_(P, Ids) :-
    record_get(P, selected, Sel),
    findall(Id, ( member(X, Sel), record_get(X, id, Id) ), Ids).

ov_range_(Key, F, T) :-
    atomic_list_concat([range, FA, TA], '_', Key), atom_number(FA, F), atom_number(TA, T).

test(with_room_every_raw_message_is_sent_once_and_no_summary,
     (   ov_conv_(o1, 60, S, C), ov_publish_(C, S),
         ov_options_(S, 100000, O),
         conversation_context_pack(C, O, ok(P)),
         ov_selected_(P, Ids), length(Ids, 60),
         \+ ( member(Id, Ids), sub_atom(Id, 0, _, _, range_) )
     )).

test(under_pressure_summaries_never_overlap_each_other_or_their_raws,
     (   ov_conv_(o2, 60, S, C), ov_publish_(C, S),
         ov_options_(S, 1400, O),
         conversation_context_pack(C, O, ok(P)),
         ov_selected_(P, Ids),
         findall(F-T, ( member(Id, Ids), ov_range_(Id, F, T) ), Ranges),
         Ranges \== [],
         \+ ( select(F1-T1, Ranges, Rest), member(F2-T2, Rest), F1 =< T2, F2 =< T1 ),
         \+ ( member(F-T, Ranges), between(F, T, Seq), Seq < 57,
              atom_concat(conversation_message_, Seq, Raw), memberchk(Raw, Ids) )
     )).

test(publishing_an_overlapping_range_warns,
     (   ov_conv_(o3, 60, S, C),
         conversation_warm_publish(C, S, range(2, 40), [generator(ov_gen_)], ok(W1)),
         \+ record_get(W1, overlaps, _),
         conversation_warm_publish(C, S, range(25, 50), [generator(ov_gen_)], ok(W2)),
         record_get(W2, overlaps, [range_2_40])
     )).

test(a_retired_artifact_is_not_offered,
     (   ov_conv_(o4, 60, S, C),
         conversation_warm_publish(C, S, range(2, 40), [generator(ov_gen_)], ok(_)),
         conversation_warm_retire(C, S, range(2, 40), ok(R)),
         record_get(R, retired, true), record_get(R, version, 2),
         conversation_warm_retire(C, S, range(2, 40), ok(R2)), record_get(R2, version, 2),
         conversation_warm_list(C, S, [], ok([L])), record_get(L, retired, true),
         conversation_warm_context_units(C, S, [], [], ok([])),
         conversation_warm_retire(C, S, range(3, 4), error(E)),
         record_get(E, kind, no_such_artifact)
     )).

ov_gen2_(_Source, _Opts, warm_context([summary("second thoughts"), decisions([]), facts([]),
                                       unresolved([]), entities([]), topics([]), files([]), symbols([])])).

test(a_newer_version_supersedes_the_older,
     (   ov_conv_(o5, 60, S, C),
         conversation_warm_publish(C, S, range(2, 40), [generator(ov_gen_)], ok(_)),
         conversation_warm_publish(C, S, range(2, 40), [generator(ov_gen2_)], ok(W)),
         record_get(W, version, 2), \+ record_get(W, overlaps, _),
         conversation_warm_context_units(C, S, [], [], ok([Unit])),
         record_get(Unit, variants, Vs), member(V, Vs), record_get(V, kind, compact_summary),
         record_get(V, value, Text), append("Summary: second thoughts", _, Text)
     )).
