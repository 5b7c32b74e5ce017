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

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

main :-
    rlm_version(V),
    format("rlmpl runtime ~w~n~n", [V]),
    conversation_store_open(persist(tour), ok(Store)),
    harbor_(Store, C),
    conversation_stats(C, ok(Stats)),
    get_(messages, Stats, N), get_(user_messages, Stats, U),
    format("conversation harbor: ~d messages, ~d from the user~n", [N, U]),
    conversation_messages(C, range(2, 3), [], ok(Range)),
    forall(member(M, Range), show_(M)),
    conversation_search(C, "fencing tokens lease", [max_results(1)], ok([Hit])),
    get_(sequence, Hit, HitSeq),
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
        conversation_import(C, 'harbor.jsonl', ok(imported(K))),
        format("imported ~d messages from harbor.jsonl~n", [K])
    ).

show_(M) :-
    get_(sequence, M, S), get_(role, M, R), get_(content, M, T),
    format("  [~d] ~w: ~s~n", [S, R, T]).

pack_(C) :-
    Policy = [max_context_tokens(600), provider_context_tokens(128000),
              reserve_output_tokens(100), safety_margin_tokens(20), min_recent_turns(6)],
    conversation_context_pack(C, [policy(Policy), token_options([model('gpt-4o')]),
                                  visible_sections([section(system, model, "Answer briefly.")])], ok(P)),
    get_(ledger, P, L),
    get_(total_tokens, L, Total), get_(limit, L, Limit), get_(method, L, Method),
    get_(selected, P, Sel), length(Sel, NSel),
    get_(cold_history_boundary, P, B), get_(omitted_ranges, B, Omitted),
    get_(solver, P, Solver), get_(status, Solver, Status),
    format("~npack under a ~d-token ceiling: ~d units, ~d tokens (~w), solver ~w~n",
           [Limit, NSel, Total, Method, Status]),
    format("left out, still searchable: ~w~n", [Omitted]).

tour_planner_(_, plan([context(input(context), search("cosign"), hits),
                       final(var(hits))])).

cold_(C) :-
    conversation_cold_context(C, [], ok(Ref)),
    rlm_completion("How do we sign releases?", Ref,
                   [planner_handler(tour_planner_), context_options([max_results(2)])], ok(R)),
    get_(value, R, [First|_]),
    get_(value, First, View), get_(sequence, View, S), get_(content, View, T),
    format("~na plan found message ~d in cold history: ~s~n", [S, T]),
    get_(handle, Ref, H),
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
    get_(user, R, U), get_(sequence, U, US), get_(assistant, R, A), get_(sequence, A, AS),
    get_(content, A, Reply),
    get_(receipt, R, Receipt), get_(calls, Receipt, Calls), length(Calls, N),
    get_(trajectory, Receipt, Steps), length(Steps, K),
    get_(context, Receipt, Ctx), get_(total_tokens, Ctx, Total), get_(limit, Ctx, Limit),
    format("~na managed turn stored question ~d and reply ~d: ~s~n", [US, AS, Reply]),
    format("its receipt: ~d planner call, ~d steps, ~d of ~d tokens~n", [N, K, Total, Limit]).

% The turn's planner searches the cold history, then answers.
turn_planner_(_, plan([context(input(context), search("cosign"), hits),
                       final(literal("We sign releases with cosign (message 15).")) ])).
