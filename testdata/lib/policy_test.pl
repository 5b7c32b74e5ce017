% Suite for lib/rlm_policy.pl: a program's own value model and pack hook
% (this file redefines context_utility/3 and context_pack_hook/2, as a
% program would), and the option schemas.
:- set_prolog_flag(double_quotes, chars).
:- dynamic(hook_mode_/1).

% Older turns are worth more the older they are.
context_utility(hot_message, 1000000, 1).
context_utility(older_message, 1000000, -1000).
context_utility(cold_history_boundary, 2000000, 0).

context_pack_hook(Units, Adjustments) :-
    hook_mode_(Mode),
    hook_(Mode, Units, Adjustments).

hook_(none, _, []).
hook_(pin_last_older, Units, [mandatory(Id)]) :-
    memberchk(unit(Id, conversation, 5, false), Units).
hook_(fail, _, _) :- fail.
hook_(bad, _, [frobnicate(x)]).

mode_(M) :- retractall(hook_mode_(_)), assertz(hook_mode_(M)).

conv_(Id, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    length(L, 120), maplist(=(w), L),
    forall(between(1, 6, _), conversation_append(C, message(user, L), ok(_))).

kept_(P, Seqs) :-
    record_get(P, selected, Sel),
    findall(S, ( member(X, Sel), record_get(X, sequence, S) ), Seqs).

% Room for the tail (seq 6) and three older turns (49 tokens each).
tight_(Window, [policy([max_context_tokens(200), provider_context_tokens(200), reserve_output_tokens(0),
                       safety_margin_tokens(0), min_recent_turns(1), window(Window)]),
                cold_history_boundary(false)]).

test(program_value_model_is_used,
     (   mode_(none), conv_(p1, C), tight_(most_turns, O),
         conversation_context_pack(C, O, ok(P)), kept_(P, [1, 2, 3, 6])
     )).

test(contiguous_window_ignores_where_utility_lies,
     (   mode_(none), conv_(p2, C), tight_(contiguous, O),
         conversation_context_pack(C, O, ok(P)), kept_(P, [3, 4, 5, 6])
     )).

test(hook_pins_a_unit,
     (   mode_(pin_last_older), conv_(p3, C), tight_(most_turns, O),
         conversation_context_pack(C, O, ok(P)), kept_(P, [1, 2, 5, 6])
     )).

test(failing_hook_fails_the_pack,
     (   mode_(fail), conv_(p4, C), tight_(most_turns, O),
         conversation_context_pack(C, O, error(E)), record_get(E, kind, pack_hook_failed)
     )).

test(bad_adjustment_is_a_domain_error,
     [throws(error(domain_error(pack_adjustment, frobnicate(x)), conversation_context_pack/3))],
     (   mode_(bad), conv_(p5, C), tight_(most_turns, O),
         conversation_context_pack(C, O, _)
     )).

test(option_schema_is_introspectable,
     (   rlm_option(conversation_search/4, max_results, positive_integer, default(32)),
         rlm_option(context_policy/2, window, oneof(Ws), default(contiguous)), memberchk(most_turns, Ws)
     )).

test(default_policy_comes_from_the_schema,
     (   default_context_policy(context_policy(Ps)),
         forall(( rlm_option(context_policy/2, K, _, default(V)) ), ( P =.. [K, V], memberchk(P, Ps) ))
     )).

test(append_counts_every_policy_encoding,
     (   mode_(none), conv_(p6, C),
         conversation_message(C, 1, ok(M)), record_get(M, token_counts, token_counts(Counts)),
         forall(conversation_count_encoding(E), ( P =.. [E, N], memberchk(P, Counts), integer(N) ))
     )).
