/** <module> rlmpl conversation runtime

The public Prolog surface of rlmpl: managed conversations, context packing,
token accounting, context handles and bounded recursive completions. Go
(host/) does the mechanism — storage, counting, solving, providers — through
foreign predicates; this file holds the policy and the facades.

Conventions (DESIGN.md §3, STYLE.md §6):

  - Public predicates are det and return one Outcome: ok(Value) or
    error(Reason). Failure only ever means "no".
  - error/1 (an outcome) and error/2 (an ISO exception) differ only in
    arity: a contract violation (wrong argument type, unknown option)
    throws error(Formal, Context); an expected outcome is returned.
  - Records stand in for upstream dicts: Tag([key(Value), ...]) with keys
    in sorted order.
  - Text is chars (double_quotes=chars); text arguments accept atoms,
    chars and codes.

Exports:
    rlm_version/1                % -Version
    rlm_ready/0
    conversation_context_pack/3  % +Conversation, +Options, -Outcome
    conversation_token_ledger/3  % +Conversation, +Options, -Outcome
    conversation_turn/4          % +Conversation, +Message, +Options, -Outcome
    conversation_turn_async/4    % +Conversation, +Message, +Options, -Outcome
    conversation_turn_await/3    % +Task, +Timeout, -Outcome
    conversation_turn_cancel/1   % +Task
    conversation_turn_receipt/3  % +Conversation, +TurnId, -Outcome
    conversation_receipts/3      % +Conversation, +Options, -Outcome

Policy lives in lib/rlm_policy.pl, as data Go reads once per session:
the value model (context_utility/3), the boundary text, the encodings
counted at append and the option schemas; a program's context_pack_hook/2
adjusts one bounded candidate batch per pack.
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Runtime identity --- */

%!  rlm_version(-Version) is det.
%
%   Version is the runtime's version as an atom, e.g. '0.1.0'. It is the
%   same string `rlmpl version` prints.
rlm_version(Version) :-
    '$rlm_version'(Version).

%!  rlm_ready is semidet.
%
%   True when the runtime library is loaded and its foreign predicates are
%   installed; scripts can guard on it.
rlm_ready :-
    rlm_version(_).

/* --- Managed context --- */

%!  conversation_context_pack(+Conversation, +Options, -Outcome) is det.
%
%   Defined in Go (host/pred_pack.go over host/runtime). Compiles the
%   provider-visible context of Conversation under the hard
%   ceiling: fixed sections, then one exact optimization over the
%   mandatory hot tail, at most max_candidates older turns (read
%   newest-first, so the cost does not grow with the history), supplied
%   units and the cold-history boundary; tool calls and their results are
%   kept together. Options:
%
%     - policy(Overlay): see context_policy/2 (window(contiguous), the
%       default, keeps the hot tail plus the longest run of whole exchanges
%       before it that fits; window(most_turns) is upstream's model);
%     - token_options([model(M)]) or [encoding(E)] or
%       [token_counter(C)]: the counter (default: the conservative
%       estimator, labelled estimated). token_counter(C), upstream's, is
%       the program's own: call(C, Text, N) counts every text
%       (method(caller_supplied); a unit's total, with the estimator's
%       chat framing, says estimated); an exception or a bad N in C is
%       thrown. conversation_turn/4 refuses it (its packs are composed
%       where Prolog cannot be called);
%     - visible_sections([section(Name, model|host, Text)]): charged and
%       rendered (model) or measured only (host);
%     - context_units(Units): extra units (warm summaries, explicit text);
%     - cold_history_boundary(Bool): default true.
%
%   Outcome is ok(conversation_context_pack([cold_history_boundary(St),
%   conversation_id(Id), ledger(L), policy(P), request(Messages),
%   selected(S), solver(Sv), utility(U)])): Messages is the exact request
%   counted by the ledger, whose total never exceeds the ceiling. Overflow
%   is an error naming what does not fit. Pinned messages (system messages,
%   conversation_pin/3) come first, section pinned. St is
%   cold_history_boundary([active(B), configured(B), left_out(L),
%   projected_messages(N), reason(R), ...]), when active also form(F), the
%   form of context_boundary_template/1 sent (1, the fullest, unless it did
%   not fit: a tight window gets a shorter one), with L the messages that could
%   not be sent whatever the room, as left_out(Seq, Reason): a tool result
%   whose call is not in the pack (an older store, a lenient import) is
%   left out with orphan_tool_result rather than failing every turn; turn
%   receipts say the same (boundary left_out). Each selection is
%   context_selection([id, kind, section, tokens, utility, ...]) with the
%   message's sequence(N) or the unit's text(T), and upstream's value(V),
%   context_value([sequence(N)]) or context_value([text(T)]); the pack
%   also says warm_context_status(W) (and, upstream's name, warm(W)):
%   configured, available, stale and loaded_units.

%!  conversation_token_ledger(+Conversation, +Options, -Outcome) is det.
%
%   The ledger of conversation_context_pack/3 with the same options:
%   ok(token_ledger([...])).
conversation_token_ledger(Conversation, Options, Outcome) :-
    conversation_context_pack(Conversation, Options, Packed),
    (   Packed = ok(conversation_context_pack(Props))
    ->  memberchk(ledger(Ledger), Props),
        Outcome = ok(Ledger)
    ;   Outcome = Packed
    ).

/* --- Managed turns (defined in Go: host/pred_turn.go over host/runtime) --- */

%!  conversation_turn(+Conversation, +Message, +Options, -Outcome) is det.
%
%   One managed turn. Message must be a user message (else
%   detail(turn_requires_user_message(conversation_error([...,
%   detail(not_user_message), ...]))) and nothing is stored). The turn
%   stores it durably under the turn's key, compiles the planner's request
%   from the transcript under the hard ceiling — its instructions, the plan
%   grammar, the capabilities, the tool schemas and the budget as leading
%   messages (each a ledger stage), the packed conversation (the hot tail
%   with the new message, older turns, warm summaries, the cold-history
%   boundary) and the goal last — and runs rlm_completion/4 over an
%   ephemeral cold-history handle of this conversation, which it always
%   deletes. Every model step of the plan continues the conversation: its
%   request is the packed conversation and the step's prompt, under the
%   same ceiling. Nothing is ever sent over the ceiling (an overflow fails
%   the turn before any call). On success the assistant message (the value
%   as text, or its canonical JSON for a structured value) and a receipt
%   are stored in one transaction. When the plan ends with a model step,
%   the value and the assistant message are the model's text (its model
%   and reasoning are the receipt's response(...)). Options:
%
%     - context_options(L): as conversation_context_pack/3, warm_store(S)
%       included;
%     - completion_options(L): as rlm_completion/4 (capabilities default to
%       context(peek), context(slice), context(search) and model(P) for the
%       provider; explicit ones are never widened);
%     - cold_context_options(L): the cold handle's limits;
%     - turn_id(Id): idempotency — the same id after a success returns the
%       stored result with replayed(true) and calls no model; after a
%       failure it reuses the stored user message. The same id with
%       another message is detail(idempotency_key_reused) and stores
%       nothing. Default: a fresh id;
%     - on_event(Closure): call(Closure, turn_event([kind(K), turn_id(T),
%       ...])) for started, context (with the ledger), step (with
%       step([depth, op, status])), delta (text(T) as it streams: a
%       model step's, or a direct answer's — a plan that is only
%       final(literal(Text)) — while the planner writes it), finished and
%       failed. Deltas show progress; the answer is the Outcome's.
%       Closure/1 must be defined: an undefined one is
%       existence_error(procedure, PI), thrown before anything is written;
%     - receipt(Bool): include the receipt in the result (default true);
%     - mode(planner | direct): planner (the default) asks a planner for a
%       plan as above; direct calls no planner: the completion runs the
%       trusted plan [respond(P, answer), final(var(answer))] for the
%       first provider P, sending the packed conversation itself (no
%       planner prompt; the boundary is direct_boundary_template/1) with
%       native tools history_search(query, max_results),
%       history_slice(start, length) and history_peek(sequence) over the
%       cold handle (as context(search|slice|peek) grant them) and the
%       granted tools (arguments checked against their schema; a refused
%       call is a tool error the model reads). Each round is recompiled
%       under the same ceiling with the calls and results so far as fixed
%       messages (over the ceiling: context_budget_failed), streams its
%       text as delta events, and is a call of kind respond in the
%       receipt;
%     - max_tool_rounds(N): the tool rounds of a direct turn (default 4);
%       the request after the last offers no tools, so the model answers;
%     - mcp(Grants): tools of MCP servers (see mcp_server/3), each grant
%       Server (every tool it lists) or Server-Tools (names, or patterns
%       with * and ?, as atoms or text). What a grant allows is fixed the
%       first time the session resolves it: a tool the server adds later
%       is not offered. Each turn lists the servers' tools (cached until a
%       server says its list changed) and grants tool(Server__Name) for
%       each: a direct turn offers them as functions, charged in the tool
%       stage as the request renders them; a planner sees their schemas
%       and may call them in tool steps. A server whose granted
%       definitions exceed its max_tool_tokens fails the turn
%       (context_budget_failed(mcp_error([kind(ceiling_exceeded), ...])))
%       rather than drop some. A call that times out, a server that exits
%       or sends garbage, and a result marked as an error are tool errors
%       the model reads; a result larger than context_tool_excerpt/2's
%       share of the room is sent as an excerpt and stored whole. The
%       receipt's mcp([...]) names each server, its tools, their tokens
%       and every call.
%
%   Outcome is ok(conversation_turn_result([assistant(Rec), receipt(R),
%   replayed(B), turn_id(T), user(Rec), value(V)])) or
%   error(conversation_error([detail(Kind(Reason)), kind(conversation_error),
%   ledger(L), message(M), phase(turn), turn_id(T), user(Rec)])) with Kind
%   context_budget_failed, completion_failed or receipt_failed: the user
%   message stays stored and a failed receipt names the cause. A turn
%   whose process died before its receipt is recorded by the next turn
%   as failed (kind turn_interrupted), and a user message left without a
%   reply is followed in later requests by context_no_reply_note/1.

%!  conversation_turn_async(+Conversation, +Message, +Options, -Outcome) is det.
%
%   Starts the turn conversation_turn/4 would run, with the same options,
%   and returns at once: Outcome is ok(turn_task(N, TurnId)) (the turn id
%   is turn_id(Id)'s, or a fresh one), or the error conversation_turn/4
%   would give for a bad message or conversation, and then nothing starts.
%   The turn starts only once Outcome is unified: when it does not unify
%   the call fails and no turn runs, so every turn that runs can be awaited
%   and cancelled. Turns of one conversation run one at a time, in the
%   order they were started; turns of different conversations run in
%   parallel. The interpreter runs one goal at a time, so the turn's calls
%   back into Prolog — on_event, handlers, the pack hook — run inside
%   conversation_turn_await/3 (of any task), or inside a conversation_turn/4
%   of the same session while it runs (it may be waiting for that turn):
%   events wait there without holding the turn up, a handler holds it
%   until then.

%!  conversation_turn_await(+Task, +Timeout, -Outcome) is det.
%
%   Waits up to Timeout seconds (a number, or infinite) for Task. Outcome is
%   the turn's, exactly as conversation_turn/4 gives it, and the task is
%   then forgotten (awaiting it again is an existence_error). At the
%   time-out Outcome is error(conversation_error([detail(turn_pending(Task)),
%   ..., phase(await)])) and the turn runs on: await it again or cancel it.

%!  conversation_turn_cancel(+Task) is det.
%
%   Cancels Task: a model call in flight is abandoned, the cold handle is
%   deleted and a failed receipt names the cancellation; awaiting the task
%   gives that failure, detail(completion_failed(completion_error([...,
%   kind(cancelled), ...]))). A task still waiting for an earlier turn of
%   its conversation keeps its place: when that one ends, it stores its
%   user message and the failed receipt, in order. Cancelling a task that has ended does nothing.
%   Closing the session cancels the tasks still running.

%!  conversation_turn_receipt(+Conversation, +TurnId, -Outcome) is det.
%
%   ok(turn_receipt([...])): what the latest run of the turn saw — status,
%   attempt, user_seq, assistant_seq, the counter (encoding, model, method),
%   the context (selected units with their representation, ledger stages,
%   solver status, boundary and warm status), every call (kind,
%   request_sha256 of the exact body sent, local_prompt_tokens and method,
%   provider_prompt_tokens and difference, the recipe that renders it again
%   from the store; one per HTTP attempt, retries and failures included,
%   with attempt, status and error), the plan, the trajectory, usage and
%   timings (pack_ms, completion_ms, total_ms). A receipt copies no
%   transcript: a recipe names stored messages by sequence (a run of them
%   as seq(First), through(Last), tokens_each([...])), and a literal
%   message of 256 bytes or more (instructions, a system prompt) by
%   ref(SHA256), kept once per conversation; the selection and the ledger
%   stages keep runs the same way (through, tokens_each, charged_each).
%   Never a
%   credential. detail(not_found(TurnId)) for a turn that never ran.

%!  conversation_receipts(+Conversation, +Options, -Outcome) is det.
%
%   ok(Receipts) in the order of their user messages: the latest run of
%   each turn, or every run with history(true); status(completed|failed)
%   keeps those (default any). Pages: limit(N) gives at most N receipts,
%   after(Seq) only the turns whose user message follows Seq — the
%   user_seq of a page's last receipt starts the next page. Receipts are
%   read one at a time, so a page costs what it holds and the messages
%   it spans, not every receipt the conversation stores.
