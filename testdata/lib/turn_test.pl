% Suite for conversation_turn/4: the upstream runtime and cold turn cases
% with trusted Prolog planners, plus idempotency, receipts and events.
:- set_prolog_flag(double_quotes, chars).
:- dynamic(event_/1).
:- dynamic(calls_/1).

conv_(Id, Texts, S, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    forall(member(T, Texts), conversation_append(C, message(user, T), ok(_))).

% Some message of the planner's request contains Text.
sees_(Req, Text) :-
    record_get(Req, messages, Ms), member(M, Ms), record_get(M, content, C),
    contains_(C, Text), !.

contains_(Chars, Part) :- append(_, Rest, Chars), append(Part, _, Rest), !.

boundary_planner_(Req, plan([final(literal("BOUNDARY_OK"))])) :-
    sees_(Req, "Cold history boundary:"),
    sees_(Req, "Sequences 1..2 may be absent"),
    sees_(Req, "context(input(context), search").

warm_planner_(Req, plan([final(literal("WARM_OK"))])) :-
    sees_(Req, "Summary: compact useful summary").

cold_planner_(Req, plan([context(input(context), search("ancient-needle"), found), final(var(found))])) :-
    \+ sees_(Req, "ancient-needle"),
    sees_(Req, "adapter=conversation").

counting_planner_(_, plan([final(literal("counted"))])) :-
    retract(calls_(N)), N1 is N + 1, assertz(calls_(N1)).

failing_planner_(_, error(provider_down)).

useful_(_, _, warm_context([summary("compact useful summary"), decisions(["d"]), facts(["f"]),
                            unresolved(["next task"]), entities([]), topics([]), files([]), symbols([])])).

record_event_(E) :- record_get(E, kind, K), assertz(event_(K)).

% A long text of N words.
words_(N, T) :- length(Ws, N), maplist(=("word "), Ws), append(Ws, T).

needle_(T) :- words_(800, W), append(W, "ancient-needle", T).

boundary_policy_([policy([min_recent_turns(1), max_context_tokens(8000), provider_context_tokens(8000),
                          reserve_output_tokens(200), safety_margin_tokens(10)])]).

test(managed_turn_exposes_boundary_without_mutating_old_messages,
     (   conv_(t1, ["old one", "old two"], _, C),
         conversation_message(C, 1, ok(M1)),
         boundary_policy_(P),
         conversation_turn(C, message(user, "refer to something old if needed"),
                           [context_options(P), completion_options([planner_handler(boundary_planner_)])], ok(R)),
         record_get(R, assistant, A), record_get(A, content, "BOUNDARY_OK"),
         record_get(R, receipt, Rc), record_get(Rc, context, Ctx), record_get(Ctx, boundary, B), record_get(B, active, true),
         conversation_message(C, 1, ok(M1again)), M1 == M1again
     )).

test(managed_turn_reuses_warm_but_never_auto_compacts,
     (   words_(400, La), words_(400, Lb),
         conv_(t2, [La, Lb], S, C),
         conversation_warm_publish(C, S, range(1, 2), [generator(useful_)], ok(_)),
         conversation_turn(C, message(user, "continue using the old architecture"),
                           [context_options([warm_store(S), token_options([model('gpt-4o-2024-08-06')]),
                                             policy([min_recent_turns(1), max_context_tokens(1700), provider_context_tokens(1700),
                                                     reserve_output_tokens(100), safety_margin_tokens(0)])]),
                            completion_options([planner_handler(warm_planner_)])], ok(R)),
         record_get(R, assistant, A), record_get(A, content, "WARM_OK"),
         record_get(R, receipt, Rc), record_get(Rc, context, Ctx), record_get(Ctx, warm, W), record_get(W, loaded, 1),
         conversation_warm_list(C, S, [history(true)], ok(All)), length(All, 1)
     )).

test(managed_turn_keeps_old_history_out_of_planner_prompt_but_can_search_it,
     (   needle_(Old),
         conv_(t3, [Old, "middle"], _, C),
         conversation_turn(C, message(user, "find the old marker"),
                           [context_options([policy([min_recent_turns(2), max_context_tokens(1700), provider_context_tokens(1700),
                                                     reserve_output_tokens(100), safety_margin_tokens(0)]),
                                             token_options([model('gpt-4o-2024-08-06')])]),
                            completion_options([planner_handler(cold_planner_),
                                                context_options([max_results(4), max_bytes(4096)])])], ok(R)),
         record_get(R, assistant, A), record_get(A, content, Content),
         contains_(Content, "ancient-needle"),
         conversation_stats(C, ok(St)), record_get(St, messages, 4)
     )).

% A turn's completion_options take provider(Name, Settings) as the option
% itself too (docs/providers.md): its settings are read, so a raw secret is
% a configuration error of the turn.
test(turn_reads_provider_settings_as_the_option_itself,
     (   conv_(tp, [], _, C),
         conversation_turn(C, message(user, "hello"),
                           [completion_options([provider(mine, [base_url("http://127.0.0.1:9/v1"), credential("sk-live-secret-1234")])])], error(E)),
         term_to_atom(E, A), sub_atom(A, _, _, _, configuration_error), sub_atom(A, _, _, _, credential),
         \+ sub_atom(A, _, _, _, 'sk-live')
     )).

% A failed turn's error is kilobytes (its ledger, its user message):
% rlm_error_message/2 reads it as its innermost cause, on one line.
test(turn_error_message_is_the_innermost_cause,
     (   conv_(tm, [], _, C),
         conversation_turn(C, message(user, "hello"), [completion_options([provider(nowhere)])], error(E)),
         rlm_error_message(E, M),
         \+ member('\n', M), length(M, N), N < 400,
         format(atom(Full), "~q", [E]), atom_length(Full, F), F > 1000,
         atom_chars(A, M), sub_atom(A, _, _, _, 'unknown provider'),
         \+ sub_atom(A, _, _, _, token_ledger)
     )).

test(retried_turn_reuses_the_user_message,
     (   conv_(t4, [], _, C),
         conversation_turn(C, message(user, "hello"), [turn_id(once), completion_options([planner_handler(failing_planner_)])], error(E)),
         record_get(E, detail, completion_failed(_)), record_get(E, turn_id, once), record_get(E, user, U), record_get(U, sequence, 1),
         conversation_turn_receipt(C, once, ok(F)), record_get(F, status, "failed"),
         retractall(calls_(_)), assertz(calls_(0)),
         conversation_turn(C, message(user, "hello"), [turn_id(once), completion_options([planner_handler(counting_planner_)])], ok(R1)),
         record_get(R1, replayed, false),
         conversation_turn(C, message(user, "hello"), [turn_id(once), completion_options([planner_handler(counting_planner_)])], ok(R2)),
         record_get(R2, replayed, true), calls_(1),
         conversation_stats(C, ok(St)), record_get(St, messages, 2), record_get(St, user_messages, 1)
     )).

test(reused_turn_id_with_another_message_is_refused,
     (   conv_(t4b, [], _, C),
         conversation_turn(C, message(user, "What is the weather?"), [turn_id(t1), completion_options([planner_handler(counting_planner_)])], ok(_)),
         conversation_turn(C, message(user, "Delete the production database now"), [turn_id(t1), completion_options([planner_handler(counting_planner_)])], error(E)),
         record_get(E, detail, idempotency_key_reused),
         conversation_stats(C, ok(St)), record_get(St, messages, 2)
     )).

model_planner_(_, plan([model(openrouter, literal("answer the user"), [], r), final(var(r))])).
echo_model_(Call, model_response([text(T), model(m1)])) :-
    record_get(Call, prompt, P), append("echo: ", P, T).

test(a_model_steps_answer_is_the_turns_text,
     (   conv_(t4c, [], _, C),
         conversation_turn(C, message(user, "hi"), [turn_id(m), completion_options([planner_handler(model_planner_), model_handler(echo_model_)])], ok(R)),
         record_get(R, value, V), format(atom(A), "~s", [V]), A == 'echo: answer the user',
         record_get(R, assistant, Asst), record_get(Asst, content, V),
         conversation_turn_receipt(C, m, ok(Rc)), record_get(Rc, value_type, "text"),
         record_get(Rc, response, Resp), record_get(Resp, model, "m1")
     )).

test(receipts_record_what_the_model_saw,
     (   conv_(t5, ["a"], _, C),
         conversation_turn(C, message(user, "hi"), [turn_id(r1), completion_options([planner_handler(counting_planner_)])], ok(_)),
         conversation_turn_receipt(C, r1, ok(R)),
         record_get(R, status, "completed"), record_get(R, calls, [Call]),
         record_get(Call, request_sha256, Sha), length(Sha, 64),
         record_get(R, context, Ctx), record_get(Ctx, stages, Stages), length(Stages, N), N > 5,
         conversation_receipts(C, [], ok([_])),
         conversation_receipts(C, [status(failed)], ok([]))
     )).

test(receipts_are_paged,
     (   conv_(t9, [], _, C),
         retractall(calls_(_)), assertz(calls_(0)),
         forall(member(Id, [p1, p2, p3, p4, p5]),
                conversation_turn(C, message(user, "q"), [turn_id(Id), completion_options([planner_handler(counting_planner_)])], ok(_))),
         conversation_receipts(C, [limit(2)], ok([R1, R2])),
         record_get(R1, turn_id, "p1"), record_get(R2, turn_id, "p2"), record_get(R2, user_seq, Seq),
         conversation_receipts(C, [after(Seq), limit(2)], ok([R3, _])), record_get(R3, turn_id, "p3"),
         conversation_receipts(C, [after(Seq)], ok(Rest)), length(Rest, 3),
         conversation_receipts(C, [after(Seq), status(failed)], ok([]))
     )).

test(events_are_reported,
     (   retractall(event_(_)),
         conv_(t6, [], _, C),
         conversation_turn(C, message(user, "hi"), [on_event(record_event_), completion_options([planner_handler(counting_planner_)])], ok(_)),
         event_(started), event_(context), event_(step), event_(finished)
     )).

test(turn_requires_a_user_message,
     (   conv_(t7, [], _, C),
         conversation_turn(C, message(assistant, "hi"), [], error(E)),
         record_get(E, detail, turn_requires_user_message(_)),
         conversation_turn(C, message([role(tool), content("42"), tool_call_id(c1)]), [], error(E2)),
         record_get(E2, detail, turn_requires_user_message(R)),
         R = conversation_error(_), record_get(R, detail, not_user_message),
         conversation_stats(C, ok(St)), record_get(St, messages, 0)
     )).

test(unknown_turn_option_throws,
     [throws(error(domain_error(conversation_turn_option, colour(red)), conversation_turn/4))],
     (   conv_(t8, [], _, C), conversation_turn(C, message(user, "x"), [colour(red)], _) )).

% A direct turn's model reads the conversation itself, with the tool
% boundary, and answers; no planner is configured, so none may be asked.
direct_model_(Call, "DIRECT_OK") :-
    sees_(Call, "call history_search before guessing"),
    sees_(Call, "hello directly"),
    \+ sees_(Call, "A plan is a list of steps").

test(direct_turn_answers_without_a_planner,
     (   conv_(t9, ["old one", "old two"], _, C),
         boundary_policy_(P),
         conversation_turn(C, message(user, "hello directly"),
                           [mode(direct), context_options(P), completion_options([model_handler(direct_model_)])], ok(R)),
         record_get(R, assistant, A), record_get(A, content, "DIRECT_OK"),
         record_get(R, receipt, Rc), record_get(Rc, calls, [Call]), record_get(Call, kind, "respond")
     )).

test(turn_mode_is_checked,
     (   conv_(t10, [], _, C),
         catch(conversation_turn(C, message(user, "x"), [mode(sideways)], _), error(E, _), true),
         E == domain_error(oneof([planner, direct]), sideways)
     )).
