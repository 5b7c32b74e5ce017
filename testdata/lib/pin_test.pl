% Suite for pinned context: the conversation's system messages and what a
% program pins with conversation_pin/3 are in every pack, first.
:- set_prolog_flag(double_quotes, chars).

% A system message, then N user/assistant messages of about 60 tokens.
pinned_conv_(Id, N, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    conversation_append(C, message(system, "You are Ops Copilot, the on-call assistant."), ok(_)),
    length(L, 60), maplist(=('w '), L), atomic_list_concat(L, W),
    forall(between(1, N, I),
           (   (I mod 2 =:= 1 -> R = user ; R = assistant),
               atomic_list_concat([turn, I, ' ', W], T),
               conversation_append(C, message(R, T), ok(_))
           )).

pin_policy_(Max, [policy([max_context_tokens(Max), provider_context_tokens(Max), reserve_output_tokens(10),
                          safety_margin_tokens(10), min_recent_turns(4)]), token_options([model('gpt-4o')])]).

selected_ids_(P, Ids) :-
    record_get(P, selected, Sel),
    findall(Id, ( member(X, Sel), record_get(X, id, Id) ), Ids).

test(system_message_is_pinned_first_with_room,
     (   pinned_conv_(p1, 30, C),
         pin_policy_(100000, O),
         conversation_context_pack(C, O, ok(P)),
         selected_ids_(P, [conversation_message_1|_]),
         record_get(P, selected, [X|_]), record_get(X, section, pinned),
         record_get(P, cold_history_boundary, B), record_get(B, omitted_ranges, [])
     )).

test(system_message_survives_pressure_older_turns_do_not,
     (   pinned_conv_(p2, 30, C),
         pin_policy_(600, O),
         conversation_context_pack(C, O, ok(P)),
         selected_ids_(P, Ids),
         Ids = [conversation_message_1|_],
         \+ memberchk(conversation_message_2, Ids),
         record_get(P, ledger, L), record_get(L, stages, Stages),
         member(St, Stages), record_get(St, name, conversation_message_1),
         record_get(St, section, pinned)
     )).

test(pinned_overflow_fails_closed_naming_the_pins,
     (   pinned_conv_(p3, 4, C),
         conversation_pin(C, range(2, 3), ok(_)),
         pin_policy_(100, O),
         conversation_context_pack(C, O, error(E)),
         record_get(E, kind, pinned_context_exceeds_limit),
         record_get(E, units, [conversation_message_1, conversation_message_2, conversation_message_3])
     )).

test(pin_is_durable_and_idempotent,
     (   pinned_conv_(p4, 30, C),
         conversation_pin(C, message(3), ok(R1)), record_get(R1, changed, true),
         conversation_pin(C, message(3), ok(R2)), record_get(R2, changed, false),
         pin_policy_(600, O),
         conversation_context_pack(C, O, ok(P)),
         selected_ids_(P, [conversation_message_1, conversation_message_3|_])
     )).

test(unpin_lets_a_program_replace_its_instructions,
     (   pinned_conv_(p5, 30, C),
         conversation_append(C, message(system, "New instructions."), ok(M)),
         record_get(M, sequence, New),
         conversation_pin(C, unpin(message(1)), ok(R)), record_get(R, pinned, false),
         pin_policy_(600, O),
         conversation_context_pack(C, O, ok(P)),
         selected_ids_(P, [First|Ids]),
         atom_concat(conversation_message_, New, First),
         \+ memberchk(conversation_message_1, Ids)
     )).

test(tool_messages_cannot_be_pinned,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(p6)], ok(C)),
         conversation_append(C, message(user, "look it up"), ok(_)),
         conversation_append(C, message([role(assistant), tool_calls([tool_call([id(c1), name(f), arguments("{}")])])]), ok(_)),
         conversation_append(C, message([role(tool), tool_call_id(c1), content("42")]), ok(_)),
         conversation_pin(C, range(1, 3), error(E)),
         record_get(E, detail, unpinnable_message(p6, 1, 3)),
         conversation_pin(C, range(1, 9), error(E2)),
         record_get(E2, detail, invalid_range(p6, 1, 9))
     )).

test(bad_pin_target_throws, [throws(error(domain_error(pin_target, first), _))],
     (   pinned_conv_(p7, 2, C),
         conversation_pin(C, first, _)
     )).

% Some message of the planner's request contains Text.
pin_sees_(Req, Text) :-
    record_get(Req, messages, Ms), member(M, Ms), record_get(M, content, C),
    append(_, Rest, C), append(Text, _, Rest), !.

ops_planner_(Req, plan([final(literal("PINNED_OK"))])) :-
    pin_sees_(Req, "You are Ops Copilot").

test(a_turn_sends_the_conversations_system_message,
     (   pinned_conv_(p8, 30, C),
         conversation_turn(C, message(user, "who are you?"),
                           [context_options([policy([min_recent_turns(4)])]),
                            completion_options([planner_handler(ops_planner_)])], ok(R)),
         record_get(R, assistant, A), record_get(A, content, "PINNED_OK")
     )).
