% Suite for lib/rlm_context_budget.pl: the upstream budget scenarios.
:- set_prolog_flag(double_quotes, chars).

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

char_counter_(Text, N) :- atom_length(Text, N).

unit_(Id, Tokens, Utility,
      context_unit([id(Id), section(conversation), variants([context_variant([kind(verbatim), tokens(Tokens), utility(Utility), value(Id)])])])).

section_(Name, Vis, Tokens, context_section([name(Name), token_count(Tokens), visibility(Vis)])).

test(selects_highest_utility_pack_under_hard_cap,
     (   unit_(a, 60, 50, A), unit_(b, 40, 45, B), unit_(c, 20, 30, C),
         section_(system, model, 20, S),
         context_pack([A, B, C], [S], [max_context_tokens(100), provider_context_tokens(1000),
                                       reserve_output_tokens(10), safety_margin_tokens(5)], ok(P)),
         get_(selected, P, Sel), findall(Id, (member(X, Sel), get_(id, X, Id)), Ids),
         Ids == [b, c],
         get_(utility, P, 75),
         get_(ledger, P, L), get_(total_tokens, L, 95), get_(remaining_tokens, L, 5),
         get_(stages, L, Stages),
         findall(N-Cum, (member(St, Stages), get_(name, St, N), get_(cumulative_tokens, St, Cum)), NC),
         NC == [system-20, b-60, c-80, output_reserve-90, safety_margin-95]
     )).

test(provider_window_is_a_hard_upper_bound,
     (   context_pack([], [], [max_context_tokens(300000), provider_context_tokens(100000)], ok(P)),
         get_(ledger, P, L),
         get_(limit, L, 100000), get_(operator_limit, L, 300000), get_(provider_limit, L, 100000)
     )).

test(operator_cap_wins_over_large_provider_window,
     (   context_pack([], [], [max_context_tokens(300000), provider_context_tokens(1000000),
                               reserve_output_tokens(32000), safety_margin_tokens(8000)], ok(P)),
         get_(ledger, P, L),
         get_(limit, L, 300000), get_(total_tokens, L, 40000), get_(remaining_tokens, L, 260000)
     )).

test(host_only_metadata_is_measured_not_charged,
     (   section_(prompt, model, 80, M), section_(meta, host, 5000, H),
         context_pack([], [M, H], [max_context_tokens(100), provider_context_tokens(100),
                                   reserve_output_tokens(10), safety_margin_tokens(5)], ok(P)),
         get_(ledger, P, L),
         get_(visible_fixed_tokens, L, 80), get_(host_only_metadata_tokens, L, 5000), get_(total_tokens, L, 95),
         get_(stages, L, [_, HS|_]),
         get_(charged_to_window, HS, false), get_(observed_tokens, HS, 5000), get_(charged_tokens, HS, 0)
     )).

test(mandatory_unit_cannot_be_silently_dropped,
     (   M = context_unit([id(big), mandatory(true), variants([context_variant([kind(verbatim), tokens(90), utility(1)])])]),
         context_pack([M], [], [max_context_tokens(100), provider_context_tokens(100),
                                reserve_output_tokens(10), safety_margin_tokens(5)], error(E)),
         get_(phase, E, pack), get_(kind, E, mandatory_context_exceeds_limit),
         get_(units, E, [big]), get_(excess, E, 5)
     )).

test(fixed_context_exceeding_limit_is_typed,
     (   section_(prompt, model, 200, S),
         context_pack([], [S], [max_context_tokens(100), provider_context_tokens(100)], error(E)),
         get_(kind, E, fixed_context_exceeds_limit)
     )).

test(policy_range_errors_name_the_field,
     (   context_policy([max_candidates(200000)], error(E)),
         get_(field, E, max_candidates), get_(phase, E, policy), get_(kind, E, validation_error)
     )).

test(policy_type_errors_throw,
     [throws(error(type_error(positive_integer, 0), context_policy/2))],
     context_policy([max_context_tokens(0)], _)).

test(policy_domain_errors_throw,
     [throws(error(domain_error(oneof([deny]), truncate), context_policy/2))],
     context_policy([overflow(truncate)], _)).

test(unknown_policy_key_throws,
     [throws(error(domain_error(context_policy_option, colour(red)), _))],
     context_policy([colour(red)], _)).

test(default_policy,
     (   default_context_policy(P),
         get_(effective_context_tokens, P, 131072), get_(min_recent_turns, P, 12),
         get_(overflow, P, deny)
     )).

test(sections_count_with_token_options,
     (   context_section(system, model, abcdefgh, [token_counter(char_counter_)], ok(S)),
         get_(tokens, S, 8),
         context_section(system, model, "hello world", [model('gpt-4o')], ok(S2)),
         get_(tokens, S2, 2),
         get_(token_count, S2, C), get_(method, C, exact)
     )).

test(requires_and_excludes_are_honoured,
     (   R = context_unit([id(result), requires([call]), variants([context_variant([kind(verbatim), tokens(10), utility(100)])])]),
         C = context_unit([id(call), variants([context_variant([kind(verbatim), tokens(95), utility(1)])])]),
         context_pack([R, C], [], [max_context_tokens(100), provider_context_tokens(100),
                                   reserve_output_tokens(0), safety_margin_tokens(0)], ok(P)),
         get_(selected, P, Sel), findall(Id, (member(X, Sel), get_(id, X, Id)), Ids),
         Ids == [call]
     )).

test(estimated_counts_are_marked,
     (   token_count_text("abcdefgh", [], ok(C)), get_(method, C, estimated),
         get_(tokens, C, N), N > 0
     )).
