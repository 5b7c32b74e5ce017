% Suite for conversation_context_pack/3: the upstream runtime and cold
% scenarios that need no warm store.
:- set_prolog_flag(double_quotes, chars).

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
         record_get(P, selected, Sel), length(Sel, N), N < 3,
         last(Sel, L), record_get(L, sequence, 3),
         record_get(P, ledger, Led), record_get(Led, limit, 120), record_get(Led, total_tokens, T), T =< 120,
         conversation_stats(C, ok(St)), record_get(St, messages, 3)
     )).

% The same window with the boundary on: only its shortest form fits beside
% the hot turn, and it is sent rather than failing the pack.
test(a_tight_window_gets_the_boundarys_shortest_form,
     (   x220_(A), x220_(B), x220_(Cc),
         conv_(c1b, [A, B, Cc], C),
         conversation_context_pack(C, [policy([max_context_tokens(120), provider_context_tokens(1000000),
                                               reserve_output_tokens(10), safety_margin_tokens(5),
                                               min_recent_turns(1)])], ok(P)),
         record_get(P, cold_history_boundary, Bd),
         record_get(Bd, active, true), record_get(Bd, form, 3),
         record_get(P, request, [M|_]), record_get(M, content, Text), atom_chars('Turns before 3 omitted', Text),
         record_get(P, selected, Sel), last(Sel, L), record_get(L, sequence, 3),
         record_get(P, ledger, Led), record_get(Led, total_tokens, T), T =< 120
     )).

test(boundary_is_token_accounted_and_truthful,
     (   conv_(c2, ["old one", "old two", "current"], C),
         conversation_context_pack(C, [policy([min_recent_turns(1), max_context_tokens(2000),
                                               provider_context_tokens(2000), reserve_output_tokens(100),
                                               safety_margin_tokens(10)])], ok(P)),
         record_get(P, cold_history_boundary, B),
         record_get(B, active, true), record_get(B, form, 1),
         record_get(B, cold_range, range(1, 2)), record_get(B, guaranteed_hot_start, 3),
         record_get(B, omitted_ranges, []),
         record_get(P, selected, Sel), member(X, Sel), record_get(X, id, managed_cold_history_boundary),
         record_get(X, section, cold_history_boundary), record_get(X, kind, instruction),
         record_get(X, text, Text), atom_chars(TA, Text),
         sub_atom(TA, 0, _, _, 'Cold history boundary:'),
         atomic_list_concat([_, _|_], 'Sequences 1..2 may be absent', TA),
         atomic_list_concat([_, _|_], 'context(input(context), search', TA),
         record_get(P, ledger, L), record_get(L, stages, Stages),
         member(St, Stages), record_get(St, name, managed_cold_history_boundary),
         record_get(St, kind, context_unit), record_get(St, charged_tokens, CT), CT > 0
     )).

test(boundary_can_be_disabled,
     (   conv_(c3, ["a", "b"], C),
         conversation_context_pack(C, [policy([min_recent_turns(1)]), cold_history_boundary(false)], ok(P)),
         record_get(P, cold_history_boundary, B), record_get(B, configured, false), record_get(B, active, false),
         record_get(P, selected, Sel), \+ ( member(X, Sel), record_get(X, id, managed_cold_history_boundary) )
     )).

% A snapshot whose framing is verified counts every unit exactly; the
% undated alias counts content exactly but its framing only estimated.
test(exact_counts_with_a_model,
     (   conv_(c4, ["hello world", "second"], C),
         Units = [St, Sd]>>( member(St, Sd), record_get(St, kind, context_unit) ),
         conversation_token_ledger(C, [token_options([model('gpt-4o-2024-08-06')])], ok(L)),
         record_get(L, stages, Stages), Stages \== [],
         forall(call(Units, St, Stages), record_get(St, method, exact)),
         record_get(L, total_tokens, T), T > 0,
         conversation_token_ledger(C, [token_options([model('gpt-4o')])], ok(L2)),
         record_get(L2, stages, Stages2),
         forall(call(Units, St2, Stages2), record_get(St2, method, estimated))
     )).

test(request_is_rendered_in_order,
     (   conv_(c5, ["first", "second"], C),
         conversation_context_pack(C, [visible_sections([section(system, model, "You are terse.")]),
                                       cold_history_boundary(false)], ok(P)),
         record_get(P, request, [S, M1, M2]),
         record_get(S, role, system), record_get(S, content, "You are terse."),
         record_get(M1, content, "first"), record_get(M2, content, "second")
     )).

test(mandatory_tail_over_the_ceiling_is_typed,
     (   x220_(A),
         conv_(c6, [A, A, A], C),
         conversation_context_pack(C, [policy([max_context_tokens(100), provider_context_tokens(100),
                                               reserve_output_tokens(10), safety_margin_tokens(5),
                                               min_recent_turns(3)])], error(E)),
         record_get(E, kind, mandatory_context_exceeds_limit), record_get(E, units, Us), Us \== []
     )).

test(policy_range_errors_name_the_field,
     (   conv_(c7, ["a"], C),
         conversation_context_pack(C, [policy([max_candidates(200000)])], error(E)),
         record_get(E, field, max_candidates)
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
         record_get(P1, request, R), record_get(P2, request, R)
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
         record_get(P, ledger, L), record_get(L, stages, Stages),
         member(Low, Stages), record_get(Low, name, conversation_message_1),
         record_get(Low, method, exact), record_get(Low, charged_tokens, TLow), TLow > 85, TLow < 100,
         member(High, Stages), record_get(High, name, conversation_message_2),
         record_get(High, method, estimated), record_get(High, charged_tokens, THigh), THigh >= 1445,
         record_get(P, request, [M1, _]), record_get(M1, content, [text("look"), image_url("http://x/y.png", low)])
     )).

char_counter_(Text, N) :- atom_length(Text, N).
bad_counter_(_, many).

test(a_caller_counter_counts_every_text_and_says_so,
     (   conv_(c9, ["alpha beta", "gamma"], C),
         conversation_context_pack(C, [token_options([token_counter(char_counter_)]), cold_history_boundary(false)], ok(P)),
         record_get(P, selected, Sel), length(Sel, 2),
         % "alpha beta": 10 by the counter, "user" 4, 3 of framing
         record_get(P, ledger, Led), record_get(Led, stages, Stages),
         member(St, Stages), record_get(St, name, conversation_message_1), record_get(St, charged_tokens, 17),
         catch((conversation_context_pack(C, [token_options([token_counter(bad_counter_)])], _), fail),
               error(type_error(nonneg, many), _), true),
         catch((conversation_context_pack(C, [token_options([token_counter(char_counter_), model('gpt-4o')])], error(E)),
                record_get(E, kind, K), K \== caller), _, fail),
         catch((conversation_turn(C, message(user, "hi"), [context_options([token_options([token_counter(char_counter_)])])], _), fail),
               error(domain_error(conversation_context_pack_token_option, _), _), true)
     )).

% Upstream's names in a pack: a selection's value(V) (its sequence or its
% text as a record) and warm, the warm_context_status.
test(selections_carry_upstreams_value,
     (   conv_(c_value, ["old one", "old two", "current"], C),
         conversation_context_pack(C, [policy([min_recent_turns(1), max_context_tokens(2000),
                                               provider_context_tokens(2000), reserve_output_tokens(100),
                                               safety_margin_tokens(10)])], ok(P)),
         record_get(P, selected, Sel),
         member(B, Sel), record_get(B, id, managed_cold_history_boundary), !,
         record_get(B, value/text, Text), record_get(B, text, Text),
         member(M, Sel), record_get(M, sequence, 3), !,
         record_get(M, value, context_value([sequence(3)])),
         record_get(P, warm, W), record_get(P, warm_context_status, W), record_get(W, configured, false)
     )).
