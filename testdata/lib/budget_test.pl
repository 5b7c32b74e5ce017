% Suite for lib/rlm_context_budget.pl: the upstream budget scenarios.
:- set_prolog_flag(double_quotes, chars).

char_counter_(Text, N) :- atom_length(Text, N).

unit_(Id, Tokens, Utility,
      context_unit([id(Id), section(conversation), variants([context_variant([kind(verbatim), tokens(Tokens), utility(Utility), value(Id)])])])).

section_(Name, Vis, Tokens, context_section([name(Name), token_count(Tokens), visibility(Vis)])).

test(selects_highest_utility_pack_under_hard_cap,
     (   unit_(a, 60, 50, A), unit_(b, 40, 45, B), unit_(c, 20, 30, C),
         section_(system, model, 20, S),
         context_pack([A, B, C], [S], [max_context_tokens(100), provider_context_tokens(1000),
                                       reserve_output_tokens(10), safety_margin_tokens(5)], ok(P)),
         record_get(P, selected, Sel), findall(Id, (member(X, Sel), record_get(X, id, Id)), Ids),
         Ids == [b, c],
         record_get(P, utility, 75),
         record_get(P, ledger, L), record_get(L, total_tokens, 95), record_get(L, remaining_tokens, 5),
         record_get(L, stages, Stages),
         findall(N-Cum, (member(St, Stages), record_get(St, name, N), record_get(St, cumulative_tokens, Cum)), NC),
         NC == [system-20, b-60, c-80, output_reserve-90, safety_margin-95]
     )).

test(provider_window_is_a_hard_upper_bound,
     (   context_pack([], [], [max_context_tokens(300000), provider_context_tokens(100000)], ok(P)),
         record_get(P, ledger, L),
         record_get(L, limit, 100000), record_get(L, operator_limit, 300000), record_get(L, provider_limit, 100000)
     )).

test(operator_cap_wins_over_large_provider_window,
     (   context_pack([], [], [max_context_tokens(300000), provider_context_tokens(1000000),
                               reserve_output_tokens(32000), safety_margin_tokens(8000)], ok(P)),
         record_get(P, ledger, L),
         record_get(L, limit, 300000), record_get(L, total_tokens, 40000), record_get(L, remaining_tokens, 260000)
     )).

test(host_only_metadata_is_measured_not_charged,
     (   section_(prompt, model, 80, M), section_(meta, host, 5000, H),
         context_pack([], [M, H], [max_context_tokens(100), provider_context_tokens(100),
                                   reserve_output_tokens(10), safety_margin_tokens(5)], ok(P)),
         record_get(P, ledger, L),
         record_get(L, visible_fixed_tokens, 80), record_get(L, host_only_metadata_tokens, 5000), record_get(L, total_tokens, 95),
         record_get(L, stages, [_, HS|_]),
         record_get(HS, charged_to_window, false), record_get(HS, observed_tokens, 5000), record_get(HS, charged_tokens, 0)
     )).

test(mandatory_unit_cannot_be_silently_dropped,
     (   M = context_unit([id(big), mandatory(true), variants([context_variant([kind(verbatim), tokens(90), utility(1)])])]),
         context_pack([M], [], [max_context_tokens(100), provider_context_tokens(100),
                                reserve_output_tokens(10), safety_margin_tokens(5)], error(E)),
         record_get(E, phase, pack), record_get(E, kind, mandatory_context_exceeds_limit),
         record_get(E, units, [big]), record_get(E, excess, 5)
     )).

test(fixed_context_exceeding_limit_is_typed,
     (   section_(prompt, model, 200, S),
         context_pack([], [S], [max_context_tokens(100), provider_context_tokens(100),
                                reserve_output_tokens(20), safety_margin_tokens(5)], error(E)),
         record_get(E, kind, fixed_context_exceeds_limit), record_get(E, base, 225),
         record_get(E, reserve_output_tokens, 20), record_get(E, safety_margin_tokens, 5)
     )).

test(policy_range_errors_name_the_field,
     (   context_policy([max_candidates(200000)], error(E)),
         record_get(E, field, max_candidates), record_get(E, phase, policy), record_get(E, kind, validation_error)
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
         record_get(P, effective_context_tokens, 131072), record_get(P, min_recent_turns, 12),
         record_get(P, overflow, deny)
     )).

test(sections_count_with_token_options,
     (   context_section(system, model, abcdefgh, [token_counter(char_counter_)], ok(S)),
         record_get(S, tokens, 8),
         context_section(system, model, "hello world", [model('gpt-4o')], ok(S2)),
         record_get(S2, tokens, 2),
         record_get(S2, token_count, C), record_get(C, method, exact)
     )).

test(requires_and_excludes_are_honoured,
     (   R = context_unit([id(result), requires([call]), variants([context_variant([kind(verbatim), tokens(10), utility(100)])])]),
         C = context_unit([id(call), variants([context_variant([kind(verbatim), tokens(95), utility(1)])])]),
         context_pack([R, C], [], [max_context_tokens(100), provider_context_tokens(100),
                                   reserve_output_tokens(0), safety_margin_tokens(0)], ok(P)),
         record_get(P, selected, Sel), findall(Id, (member(X, Sel), record_get(X, id, Id)), Ids),
         Ids == [call]
     )).

test(estimated_counts_are_marked,
     (   token_count_text("abcdefgh", [], ok(C)), record_get(C, method, estimated),
         record_get(C, tokens, N), N > 0
     )).

% A section without its token_count is a domain error naming the section
% (it used to throw a type_error with a nil culprit, which crashed printing).
test(section_without_a_count_throws,
     [throws(error(domain_error(context_section, context_section([name(s), visibility(model)])), context_pack/4))],
     context_pack([], [context_section([name(s), visibility(model)])],
                  [max_context_tokens(100), provider_context_tokens(100)], _)).
test(section_error_prints,
     (   catch(context_pack([], [context_section([name(s), visibility(model)])],
                            [max_context_tokens(100), provider_context_tokens(100)], _),
               E, true),
         format(atom(A), "~p", [E]),
         sub_atom(A, _, _, _, context_section)
     )).
% Upstream's sections declare a bare count, tokens(N).
test(section_with_a_bare_count,
     (   context_pack([], [context_section([name(s), tokens(5), visibility(model)])],
                      [max_context_tokens(100), provider_context_tokens(100), reserve_output_tokens(10),
                       safety_margin_tokens(5)], ok(P)),
         record_get(P, ledger/visible_fixed_tokens, 5), record_get(P, ledger/total_tokens, 20)
     )).
