% A tour of the rlmpl runtime: `make run` runs this file.
%
% It opens a persistent conversation store (tour, under the state directory:
% $XDG_STATE_HOME/rlmpl, or --state DIR), imports a
% shipped transcript once, reads it back by range, counts and searches it,
% compiles a bounded context under a tight ceiling with exact token counts,
% retrieves an evicted turn through the cold-history handle with a plan,
% and takes a managed turn: the question is stored, the planner's request
% is compiled from the transcript under a ceiling, and the reply is stored
% with a receipt. The planner here is a trusted Prolog handler, so the tour
% runs offline (rlmpl chat and provider(P) reach real models).
:- initialization(main, main).

main :-
    rlm_version(V),
    format("rlmpl runtime ~w~n~n", [V]),
    conversation_store_open(persist(tour), ok(Store)),
    harbor_(Store, C),
    conversation_stats(C, ok(Stats)),
    record_get(Stats, messages, N), record_get(Stats, user_messages, U),
    format("conversation harbor: ~d messages, ~d from the user~n", [N, U]),
    conversation_messages(C, range(2, 3), [], ok(Range)),
    forall(member(M, Range), show_(M)),
    conversation_search(C, "fencing tokens lease", [max_results(1)], ok([Hit])),
    record_get(Hit, sequence, HitSeq),
    format("~nbest match for 'fencing tokens lease': message ~d~n", [HitSeq]),
    pack_(C),
    cold_(C),
    turn_(C),
    conversation_store_close(Store, ok(closed)).

% Creates and fills the conversation on the first run only.
harbor_(Store, C) :-
    (   conversation_open(Store, harbor, ok(C0))
    ->  C = C0
    ;   conversation_create(Store, [id(harbor), metadata([project("harbor")])], ok(C)),
        conversation_import(C, 'harbor.jsonl', ok(Imported)), record_get(Imported, messages, K),
        format("imported ~d messages from harbor.jsonl~n", [K])
    ).

show_(M) :-
    record_get(M, sequence, S), record_get(M, role, R), record_get(M, content, T),
    format("  [~d] ~w: ~s~n", [S, R, T]).

pack_(C) :-
    Policy = [max_context_tokens(600), provider_context_tokens(128000),
              reserve_output_tokens(100), safety_margin_tokens(20), min_recent_turns(6)],
    conversation_context_pack(C, [policy(Policy), token_options([model('gpt-4o')]),
                                  visible_sections([section(system, model, "Answer briefly.")])], ok(P)),
    record_get(P, ledger, L),
    record_get(L, total_tokens, Total), record_get(L, limit, Limit), record_get(L, method, Method),
    record_get(P, selected, Sel), length(Sel, NSel),
    record_get(P, cold_history_boundary, B), record_get(B, omitted_ranges, Omitted),
    record_get(P, solver, Solver), record_get(Solver, status, Status),
    format("~npack under a ~d-token ceiling: ~d units, ~d tokens (~w), solver ~w~n",
           [Limit, NSel, Total, Method, Status]),
    format("left out, still searchable: ~w~n", [Omitted]).

tour_planner_(_, plan([context(input(context), search("cosign"), hits),
                       final(var(hits))])).

cold_(C) :-
    conversation_cold_context(C, [], ok(Ref)),
    rlm_completion("How do we sign releases?", Ref,
                   [planner_handler(tour_planner_), context_options([max_results(2)])], ok(R)),
    record_get(R, value, [First|_]),
    record_get(First, value, View), record_get(View, sequence, S), record_get(View, content, T),
    format("~na plan found message ~d in cold history: ~s~n", [S, T]),
    record_get(Ref, handle, H),
    context_delete(H, ok(_)).

% A managed turn, idempotent under its id: a later run of the tour replays
% the stored result instead of asking again.
turn_(C) :-
    conversation_turn(C, message(user, "How do we sign releases again?"),
                      [turn_id(tour_release_question),
                       context_options([policy([max_context_tokens(3000), provider_context_tokens(128000),
                                                reserve_output_tokens(200), safety_margin_tokens(20),
                                                min_recent_turns(6)]),
                                        token_options([model('gpt-4o-2024-08-06')])]),
                       completion_options([planner_handler(turn_planner_)])],
                      ok(R)),
    record_get(R, user, U), record_get(U, sequence, US), record_get(R, assistant, A), record_get(A, sequence, AS),
    record_get(A, content, Reply),
    record_get(R, receipt, Receipt), record_get(Receipt, calls, Calls), length(Calls, N),
    record_get(Receipt, trajectory, Steps), length(Steps, K),
    record_get(Receipt, context, Ctx), record_get(Ctx, total_tokens, Total), record_get(Ctx, limit, Limit),
    format("~na managed turn stored question ~d and reply ~d: ~s~n", [US, AS, Reply]),
    format("its receipt: ~d planner call, ~d steps, ~d of ~d tokens~n", [N, K, Total, Limit]).

% The turn's planner searches the cold history, then answers.
turn_planner_(_, plan([context(input(context), search("cosign"), hits),
                       final(literal("We sign releases with cosign (message 15).")) ])).
