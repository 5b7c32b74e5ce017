% Suite for conversation_context_pack/3: the upstream runtime and cold
% scenarios that need no warm store.
:- set_prolog_flag(double_quotes, chars).

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

conv_(Id, Texts, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    forall(member(T, Texts), conversation_append(C, message(user, T), ok(_))).

x220_(T) :- length(L, 220), maplist(=(x), L), T = L.

test(eviction_never_deletes_the_transcript,
     (   x220_(A), x220_(B), x220_(Cc),
         conv_(c1, [A, B, Cc], C),
         conversation_context_pack(C, [policy([max_context_tokens(120), provider_context_tokens(1000000),
                                               reserve_output_tokens(10), safety_margin_tokens(5),
                                               min_recent_turns(1)]),
                                       cold_history_boundary(false)], ok(P)),
         get_(selected, P, Sel), length(Sel, N), N < 3,
         last(Sel, L), get_(sequence, L, 3),
         get_(ledger, P, Led), get_(limit, Led, 120), get_(total_tokens, Led, T), T =< 120,
         conversation_stats(C, ok(St)), get_(messages, St, 3)
     )).

test(boundary_is_token_accounted_and_truthful,
     (   conv_(c2, ["old one", "old two", "current"], C),
         conversation_context_pack(C, [policy([min_recent_turns(1), max_context_tokens(2000),
                                               provider_context_tokens(2000), reserve_output_tokens(100),
                                               safety_margin_tokens(10)])], ok(P)),
         get_(cold_history_boundary, P, B),
         get_(active, B, true), get_(cold_range, B, range(1, 2)), get_(guaranteed_hot_start, B, 3),
         get_(omitted_ranges, B, []),
         get_(selected, P, Sel), member(X, Sel), get_(id, X, managed_cold_history_boundary),
         get_(section, X, cold_history_boundary), get_(kind, X, instruction),
         get_(text, X, Text), atom_chars(TA, Text),
         sub_atom(TA, 0, _, _, 'Cold history boundary:'),
         atomic_list_concat([_, _|_], 'Sequences 1..2 may be absent', TA),
         atomic_list_concat([_, _|_], 'context(input(context), search', TA),
         get_(ledger, P, L), get_(stages, L, Stages),
         member(St, Stages), get_(name, St, managed_cold_history_boundary),
         get_(kind, St, context_unit), get_(charged_tokens, St, CT), CT > 0
     )).

test(boundary_can_be_disabled,
     (   conv_(c3, ["a", "b"], C),
         conversation_context_pack(C, [policy([min_recent_turns(1)]), cold_history_boundary(false)], ok(P)),
         get_(cold_history_boundary, P, B), get_(configured, B, false), get_(active, B, false),
         get_(selected, P, Sel), \+ ( member(X, Sel), get_(id, X, managed_cold_history_boundary) )
     )).

% A snapshot whose framing is verified counts every unit exactly; the
% undated alias counts content exactly but its framing only estimated.
test(exact_counts_with_a_model,
     (   conv_(c4, ["hello world", "second"], C),
         Units = [St, Sd]>>( member(St, Sd), get_(kind, St, context_unit) ),
         conversation_token_ledger(C, [token_options([model('gpt-4o-2024-08-06')])], ok(L)),
         get_(stages, L, Stages), Stages \== [],
         forall(call(Units, St, Stages), get_(method, St, exact)),
         get_(total_tokens, L, T), T > 0,
         conversation_token_ledger(C, [token_options([model('gpt-4o')])], ok(L2)),
         get_(stages, L2, Stages2),
         forall(call(Units, St2, Stages2), get_(method, St2, estimated))
     )).

test(request_is_rendered_in_order,
     (   conv_(c5, ["first", "second"], C),
         conversation_context_pack(C, [visible_sections([section(system, model, "You are terse.")]),
                                       cold_history_boundary(false)], ok(P)),
         get_(request, P, [S, M1, M2]),
         get_(role, S, system), get_(content, S, "You are terse."),
         get_(content, M1, "first"), get_(content, M2, "second")
     )).

test(mandatory_tail_over_the_ceiling_is_typed,
     (   x220_(A),
         conv_(c6, [A, A, A], C),
         conversation_context_pack(C, [policy([max_context_tokens(100), provider_context_tokens(100),
                                               reserve_output_tokens(10), safety_margin_tokens(5),
                                               min_recent_turns(3)])], error(E)),
         get_(kind, E, mandatory_context_exceeds_limit), get_(units, E, Us), Us \== []
     )).

test(policy_range_errors_name_the_field,
     (   conv_(c7, ["a"], C),
         conversation_context_pack(C, [policy([max_candidates(200000)])], error(E)),
         get_(field, E, max_candidates)
     )).

test(policy_type_errors_throw,
     [throws(error(type_error(nonneg, -1), conversation_context_pack/3))],
     (   conv_(c7b, ["a"], C),
         conversation_context_pack(C, [policy([min_recent_turns(-1)])], _)
     )).

test(unknown_pack_option_throws,
     [throws(error(domain_error(conversation_context_pack_option, colour(red)), _))],
     (   conv_(c8, ["a"], C), conversation_context_pack(C, [colour(red)], _) )).

test(deterministic,
     (   conv_(c9, ["one", "two", "three", "four"], C),
         Opts = [policy([min_recent_turns(2), max_context_tokens(400), provider_context_tokens(400),
                         reserve_output_tokens(10), safety_margin_tokens(5)])],
         conversation_context_pack(C, Opts, ok(P1)),
         conversation_context_pack(C, Opts, ok(P2)),
         get_(request, P1, R), get_(request, P2, R)
     )).

% I7 for images: an image part is charged by the model family's published
% rule and is exact only where that rule is (a detail-low image for
% gpt-4o: 85 tokens); otherwise its bound is charged and labelled
% estimated. The request keeps the parts.
test(images_are_counted_by_the_model_rule,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(img)], ok(C)),
         conversation_append(C, message(user, [text("look"), image_url("http://x/y.png", low)]), ok(_)),
         conversation_append(C, message(user, [text("look"), image_url("http://x/y.png", high)]), ok(_)),
         conversation_context_pack(C, [token_options([model('gpt-4o-2024-08-06')]), cold_history_boundary(false),
                                       policy([min_recent_turns(2)])], ok(P)),
         get_(ledger, P, L), get_(stages, L, Stages),
         member(Low, Stages), get_(name, Low, conversation_message_1),
         get_(method, Low, exact), get_(charged_tokens, Low, TLow), TLow > 85, TLow < 100,
         member(High, Stages), get_(name, High, conversation_message_2),
         get_(method, High, estimated), get_(charged_tokens, High, THigh), THigh >= 1445,
         get_(request, P, [M1, _]), get_(content, M1, [text("look"), image_url("http://x/y.png", low)])
     )).
