/** <module> Runtime policy, as data

What the runtime does is Go; what it *should* do is stated here, as facts a
program can read — and, where marked dynamic, change. Go reads these facts
(the option schemas once per host, the rest once per session, at first
use) and applies them natively, so policy costs nothing per call.

Option lists of the public predicates are checked against rlm_option/4 by
one checker: a non-list throws type_error(list, L); an option that is not
Name(Value) or whose Name the predicate does not take throws
domain_error(Pred_option, Opt) (strict, so typos surface); a value of the
wrong type throws the error must_be/2 would (instantiation_error,
type_error(Type, V) or domain_error(oneof(L), V)); the first occurrence of
a name wins and an absent one takes its default, as option/3 does.

Types: atom, text (atom, chars or codes), boolean, integer, nonneg,
positive_integer, number, positive_number, oneof(List), list, list(Type),
properties (a property list, or a record Tag(List): upstream's dict),
callable, limit (a positive integer or all), options(Pred) (an option list,
or a record Tag(List), checked against Pred's schema), provider (a
provider name, or provider(Name, Settings) with Settings checked against
provider/2's schema, which an option list may also hold as the option
itself; what only configuration can judge, such as a credential that is
not env(V) or none, is a configuration_error outcome) and any.

Exports:
    rlm_option/4                  % ?Predicate, ?Name, ?Type, ?Default
    conversation_count_encoding/1 % ?Encoding
    context_utility/3             % ?Class, ?Base, ?PerSequence
    context_pinned_role/1         % ?Role
    context_excerpt/2             % -MaxTokens, -NoteTemplate
    context_tool_excerpt/2        % -Percent, -NoteTemplate
    warm_fidelity/2               % ?Representation, ?Percent
    warm_signal_weight/2          % ?Kind, ?Weight
    context_boundary_template/1   % -Template
    direct_boundary_template/1    % -Template
    context_no_reply_note/1       % -Template

Hooks a program may define:
    context_pack_hook/2           % +Units, -Adjustments
*/
:- set_prolog_flag(double_quotes, chars).
:- dynamic(conversation_count_encoding/1).
:- dynamic(context_utility/3).
:- dynamic(context_pinned_role/1).
:- dynamic(context_excerpt/2).
:- dynamic(context_tool_excerpt/2).
:- dynamic(context_boundary_template/1).
:- dynamic(direct_boundary_template/1).
:- dynamic(context_no_reply_note/1).
:- dynamic(warm_fidelity/2).
:- dynamic(warm_signal_weight/2).
:- dynamic(context_pack_hook/2).

/* --- Options --- */

%!  rlm_option(?Predicate, ?Name, ?Type, ?Default) is nondet.
%
%   Predicate (Name/Arity) takes the option Name(Value) with Value of Type;
%   Default is default(V), the value an absent option takes, or optional
%   (absent means "not given"). The facts are the whole option surface of
%   the runtime and are read once per host: they are not meant to be
%   changed by programs.
%
%   ?- rlm_option(conversation_search/4, max_results, T, D).
%   T = positive_integer, D = default(32).
rlm_option(conversation_create/3, id, text, optional).
rlm_option(conversation_create/3, metadata, properties, default([])).
rlm_option(conversation_list/3, order, oneof([asc, desc]), default(desc)).
rlm_option(conversation_list/3, limit, limit, default(all)).
rlm_option(conversation_store_open/2, language, oneof([en, none]), default(en)).
rlm_option(postgres/2, language, oneof([en, none]), default(en)).
rlm_option(postgres/2, pool_size, positive_integer, optional).
rlm_option(postgres/2, statement_timeout, positive_number, optional).
rlm_option(postgres/2, connect_timeout, positive_number, optional).
rlm_option(conversation_append/4, idempotency_key, text, optional).
rlm_option(conversation_append/4, time, any, optional).
rlm_option(conversation_append/4, session, text, optional).
rlm_option(conversation_append/4, metadata, properties, default([])).
rlm_option(conversation_messages/4, limit, limit, default(all)).
rlm_option(conversation_wait/4, timeout, positive_number, optional).
rlm_option(conversation_wait/4, limit, limit, default(all)).
rlm_option(conversation_search/4, max_results, positive_integer, default(32)).
rlm_option(conversation_search/4, offset, nonneg, default(0)).
rlm_option(conversation_search/4, exact, boolean, default(false)).
rlm_option(conversation_search/4, case_sensitive, boolean, optional).
rlm_option(conversation_search/4, roles, list, default([])).
rlm_option(conversation_search/4, session, text, optional).
rlm_option(conversation_search/4, since, any, optional).
rlm_option(conversation_search/4, until, any, optional).
rlm_option(conversation_search/4, context, boolean, default(true)).
rlm_option(conversation_search/4, window, nonneg, default(0)).
rlm_option(conversation_search/4, max_bytes, nonneg, default(0)).
rlm_option(conversation_cold_context/3, Name, Type, Default) :-
    context_limit_option_(Name, Type, Default).
rlm_option(conversation_context_pack/3, policy, options(context_policy/2), default([])).
rlm_option(conversation_context_pack/3, token_options, options(token_count_text/3), default([])).
rlm_option(conversation_context_pack/3, visible_sections, list, default([])).
rlm_option(conversation_context_pack/3, context_units, list, default([])).
rlm_option(conversation_context_pack/3, cold_history_boundary, boolean, default(true)).
rlm_option(conversation_context_pack/3, tools, list, default([])).
rlm_option(conversation_context_pack/3, mcp_tools, text, optional).
rlm_option(conversation_context_pack/3, project_instructions, text, optional).
rlm_option(conversation_context_pack/3, skills, text, optional).
rlm_option(conversation_context_pack/3, warm_store, any, optional).
rlm_option(conversation_context_pack/3, warm_signals, list, default([])).
rlm_option(conversation_context_pack/3, warm_options, options(conversation_warm_context_units/5), default([])).
rlm_option(conversation_turn/4, context_options, list, default([])).
rlm_option(conversation_turn/4, completion_options, list, default([])).
rlm_option(conversation_turn/4, cold_context_options, list, default([])).
rlm_option(conversation_turn/4, turn_id, text, optional).
rlm_option(conversation_turn/4, on_event, callable, optional).
rlm_option(conversation_turn/4, receipt, boolean, default(true)).
rlm_option(conversation_turn/4, mode, oneof([planner, direct]), default(planner)).
rlm_option(conversation_turn/4, max_tool_rounds, positive_integer, default(4)).
rlm_option(conversation_turn/4, mcp, list, optional).
rlm_option(conversation_turn_async/4, Name, Type, Default) :-
    rlm_option(conversation_turn/4, Name, Type, Default).
rlm_option(conversation_receipts/3, history, boolean, default(false)).
rlm_option(conversation_receipts/3, status, oneof([any, completed, failed]), default(any)).
rlm_option(conversation_receipts/3, after, nonneg, default(0)).
rlm_option(conversation_receipts/3, limit, limit, default(all)).
rlm_option(conversation_warm_derive/4, Name, Type, Default) :-
    warm_generation_option_(Name, Type, Default).
rlm_option(conversation_warm_publish/5, Name, Type, Default) :-
    warm_generation_option_(Name, Type, Default).
rlm_option(conversation_warm_list/4, history, boolean, default(false)).
rlm_option(conversation_warm_context_units/5, policy, options(warm_policy/1), default([])).
rlm_option(warm_policy/1, max_candidates, positive_integer, default(32)).
rlm_option(warm_policy/1, fidelity, list, default([])).
rlm_option(warm_policy/1, weights, list, default([])).
rlm_option(context_policy/2, max_context_tokens, positive_integer, default(131072)).
rlm_option(context_policy/2, provider_context_tokens, positive_integer, default(131072)).
rlm_option(context_policy/2, reserve_output_tokens, nonneg, default(16384)).
rlm_option(context_policy/2, safety_margin_tokens, nonneg, default(4096)).
rlm_option(context_policy/2, min_recent_turns, nonneg, default(12)).
rlm_option(context_policy/2, max_candidates, nonneg, default(512)).
rlm_option(context_policy/2, overflow, oneof([deny]), default(deny)).
rlm_option(context_policy/2, window, oneof([contiguous, most_turns, stable]), default(contiguous)).
rlm_option(context_policy/2, effective_context_tokens, integer, optional).
rlm_option(context_policy/2, max_instruction_tokens, nonneg, default(0)).
rlm_option(context_policy/2, max_skill_tokens, nonneg, default(0)).
rlm_option(context_policy/2, max_tool_tokens, nonneg, default(0)).
rlm_option(token_count_text/3, model, atom, optional).
rlm_option(token_count_text/3, encoding, atom, optional).
rlm_option(token_count_text/3, token_counter, callable, optional).
rlm_option(token_register_encoding/4, pattern, oneof([cl100k, o200k, r50k]), default(cl100k)).
rlm_option(token_register_encoding/4, specials, list, default([])).
rlm_option(token_register_encoding/4, chat_format, oneof([none, llama3]), default(none)).
rlm_option(context_register/3, Name, Type, Default) :-
    context_limit_option_(Name, Type, Default).
rlm_option(Pred, Name, Type, Default) :-
    context_operation_(Pred),
    context_limit_option_(Name, Type, Default).
rlm_option(context_search/4, case_sensitive, boolean, default(false)).
rlm_option(context_search/4, exact, boolean, default(false)).
rlm_option(context_search/4, cursor, nonneg, default(0)).

rlm_option(Pred, Name, Type, Default) :-
    completion_predicate_(Pred),
    completion_option_(Pred, Name, Type, Default).
rlm_option(completion_budget/1, Name, Type, optional) :-
    completion_budget_field_(Name, Type).
rlm_option(mcp_server/3, command, text, optional).
rlm_option(mcp_server/3, args, list(text), optional).
rlm_option(mcp_server/3, env, list, optional).
rlm_option(mcp_server/3, url, text, optional).
rlm_option(mcp_server/3, headers, list, optional).
rlm_option(mcp_server/3, credential, any, optional).
rlm_option(mcp_server/3, timeout, positive_number, optional).
rlm_option(mcp_server/3, start_timeout, positive_number, optional).
rlm_option(mcp_server/3, max_tool_tokens, positive_integer, optional).
rlm_option(mcp_server/3, start, oneof([first_use, session]), default(first_use)).
rlm_option(mcp_tools/3, model, atom, optional).
rlm_option(mcp_tools/3, encoding, atom, optional).
rlm_option(provider/2, base_url, text, optional).
rlm_option(provider/2, endpoint, text, optional).
rlm_option(provider/2, credential, any, optional).
rlm_option(provider/2, model, text, optional).
rlm_option(provider/2, timeout, positive_number, optional).
rlm_option(provider/2, headers, list, optional).
rlm_option(provider/2, structured_output, boolean, optional).
rlm_option(provider/2, api, oneof([openai, anthropic]), optional).
rlm_option(provider/2, cache_ttl, text, optional).

rlm_option(context_adapter_register/5, description, text, optional).
rlm_option(plan_run/5, provider, provider, optional).
rlm_option(plan_run/5, model, text, optional).
rlm_option(plan_run/5, model_handler, callable, optional).
rlm_option(plan_run/5, budget, any, optional).
rlm_option(plan_run/5, cancel_token, atom, optional).
rlm_option(plan_run/5, tools, list, optional).
rlm_option(plan_run/5, context_options, options(context_register/3), optional).
rlm_option(plan_run/5, child_capabilities, list, optional).
rlm_option(plan_run/5, query, text, optional).

completion_predicate_(rlm_completion/4).
completion_predicate_(llm_query/3).
completion_predicate_(rlm_query/4).

completion_option_(_, provider, provider, optional).
completion_option_(_, model, text, optional).
completion_option_(_, model_handler, callable, optional).
completion_option_(_, budget, options(completion_budget/1), optional).
completion_option_(_, cancel_token, atom, optional).
completion_option_(_, session_id, any, optional).
completion_option_(_, trace_id, any, optional).
completion_option_(rlm_completion/4, planner_handler, callable, optional).
completion_option_(rlm_completion/4, capabilities, list, optional).
completion_option_(rlm_completion/4, child_capabilities, list, optional).
completion_option_(rlm_completion/4, tools, list, optional).
completion_option_(rlm_completion/4, context_options, options(context_register/3), optional).
completion_option_(rlm_completion/4, planner_attempts, positive_integer, optional).
completion_option_(rlm_completion/4, planner_max_tokens, positive_integer, optional).
completion_option_(rlm_completion/4, planner_instruction, text, optional).
completion_option_(Pred, Name, Type, optional) :-
    Pred \== rlm_completion/4,
    query_option_(Name, Type).
completion_option_(rlm_query/4, depth, nonneg, default(1)).

query_option_(max_tokens, positive_integer).
query_option_(temperature, number).
query_option_(on_delta, callable).

% The overlay of default_completion_budget/1; absent fields keep it.
completion_budget_field_(max_iterations, positive_integer).
completion_budget_field_(max_recursion_depth, nonneg).
completion_budget_field_(max_concurrent_subcalls, positive_integer).
completion_budget_field_(max_model_calls, positive_integer).
completion_budget_field_(max_tool_calls, nonneg).
completion_budget_field_(max_context_ops, nonneg).
completion_budget_field_(max_total_tokens, positive_integer).
completion_budget_field_(max_cost_usd, number).
completion_budget_field_(max_output_bytes, positive_integer).
completion_budget_field_(time_limit, positive_number).
completion_budget_field_(unknown_call_cost_usd, number).

context_operation_(context_peek/4).
context_operation_(context_slice/5).
context_operation_(context_search/4).
context_operation_(context_partition/4).
context_operation_(context_map/4).
context_operation_(context_reduce/4).

warm_generation_option_(generator, callable, default(rlm)).
warm_generation_option_(completion_options, list, default([])).
warm_generation_option_(token_options, options(token_count_text/3), default([])).

context_limit_option_(max_results, positive_integer, default(32)).
context_limit_option_(max_bytes, positive_integer, default(16384)).
context_limit_option_(time_limit, positive_number, default(0.25)).

/* --- Conversations --- */

%!  conversation_count_encoding(?Encoding) is nondet.
%
%   The encodings whose token counts are computed when a message is
%   appended (or imported) and stored with it, so packs for models of
%   those encodings never re-tokenize history; packs for other encodings
%   count a message at first use and record the count then. Dynamic: a
%   program that only talks to one model family may retract the others.
conversation_count_encoding(o200k_base).
conversation_count_encoding(cl100k_base).

/* --- Managed context --- */

%!  context_utility(?Class, ?Base, ?PerSequence) is nondet.
%
%   The value model of a conversation pack: a unit of Class is worth
%   Base + PerSequence * sequence. The mandatory hot tail 1e6+seq, optional
%   older turns 1e3+seq, the cold-history boundary 2e6. Under the default
%   window(contiguous) the older turns kept are the longest run of whole
%   exchanges before the tail that fits; under window(most_turns)
%   (upstream's model) as many older turns as fit, newer first on ties;
%   under window(stable) the contiguous window keeps its start from turn
%   to turn while it fits (a provider's prompt cache serves the repeated
%   prefix) and moves forward in one step, freeing half its room, when it
%   no longer does.
%   Dynamic: a program may define its own.
context_utility(hot_message, 1000000, 1).
context_utility(older_message, 1000, 1).
context_utility(cold_history_boundary, 2000000, 0).

%!  context_pinned_role(?Role) is nondet.
%
%   Messages of Role are pinned in every pack of their conversation: always
%   in the request, first after the fixed sections (where a system prompt
%   belongs), never summarized away and never dropped for an older turn.
%   When pinned messages cannot fit beside the fixed sections, the output
%   reserve and the safety margin, the pack (and a turn) fails closed with
%   context_budget_error([kind(pinned_context_exceeds_limit),
%   units(Ids), ...]) naming them. Pinned messages are their own ledger
%   stages (section pinned). conversation_pin/3 pins any other range and
%   unpins one (a program that replaces its instructions appends the new
%   system message and unpins the old). The store's roles are system,
%   user, assistant and tool (OpenAI's developer messages are stored as
%   system). Dynamic: retract it to stop pinning system messages.
context_pinned_role(system).

%!  context_excerpt(-MaxTokens, -NoteTemplate) is det.
%
%   A message of the mandatory hot tail whose content has more than
%   MaxTokens tokens (a model reply far over its max_tokens, a huge tool
%   result) may be sent as an excerpt: its first MaxTokens tokens, then
%   NoteTemplate, which says how to read the rest through the cold-history
%   handle. The pack sends it whole whenever it fits (verbatim is worth
%   twice the excerpt) and the excerpt only when it does not, so such a
%   message never fails every later turn; the transcript keeps it whole.
%   The ledger stage's representation is excerpt. In the template {seq}
%   is the message's sequence, {item} its index in the cold-history handle,
%   {shown} and {total} the tokens shown and in the whole content.
%   Dynamic: a program may choose its own size and note.
context_excerpt(1024,
    "[Excerpt: message {seq} has {total} tokens, too many for this context; the first {shown} are above. The whole message is item {item} of the cold history: read it with context(input(context), peek(item({item})), r), or find a passage with context(input(context), search(\"words\"), r).]").

%!  context_tool_excerpt(-Percent, -NoteTemplate) is det.
%
%   A tool result of a direct turn's round (an MCP server's 5 MB answer)
%   larger than Percent of the room under the request's ceiling (after
%   the output reserve and the safety margin) is sent to the model as its
%   first that many tokens, then NoteTemplate; the result is stored whole
%   with the turn's answer, where later turns read it through the cold
%   history (and, in their hot tail, as context_excerpt/2 says). In the
%   template {tool} is the function called, {shown} and {total} the
%   tokens shown and in the whole result. Dynamic: a program may choose
%   its own share and note.
context_tool_excerpt(25,
    "[Excerpt: the result of {tool} has {total} tokens, too many for this context; the first {shown} are above. Call the tool again with narrower arguments to see another part. The whole result is stored with this turn's answer: later turns can find it in the cold history.]").

%!  context_boundary_template(-Template) is multi.
%
%   The forms of the cold-history boundary, the synthetic system message
%   that tells the model older turns exist and how to fetch them, fullest
%   first: a pack sends the first form with which everything mandatory
%   fits, so a small window gets the compact second form (about 35 o200k
%   tokens against 190) or the bare third (7) instead of failing, and its pack says which it sent
%   (form(N) in cold_history_boundary). In a template {conversation} is the
%   conversation id, {cold_through} the last sequence that may be absent
%   and {hot_start} the first of the hot tail; the rendered text depends on
%   nothing else, so the request prefix stays cacheable. The retrieval
%   examples are valid plans in both syntaxes (bind names are atoms: the
%   plan reader refuses variables). Dynamic: a program may assert its own
%   forms, in the order it prefers.
context_boundary_template(
    "Cold history boundary: conversation {conversation} has durable history outside the guaranteed hot tail. Sequences 1..{cold_through} may be absent from this context; the hot tail begins at sequence {hot_start}. Nothing has been deleted. If the user refers to an earlier decision, fact, file, task or discussion that is not in context, retrieve it before answering with a plan step on the cold history: context(input(context), search(\"query\"), r), context(input(context), slice(Start, Length), r) or context(input(context), peek(item(Index)), r), binding r (any lower-case name) for later steps (JSON: {\"op\":\"context\",\"handle\":{\"ref\":\"input\",\"name\":\"context\"},\"action\":{\"type\":\"search\",\"pattern\":\"query\"},\"bind\":\"r\"}). Refine the query when a result is truncated. Summaries may stand for old turns; the cold transcript is authoritative.").
context_boundary_template(
    "Sequences 1..{cold_through} are stored but may be absent here. Before relying on them, retrieve: context(input(context), search(\"query\"), r).").
context_boundary_template("Turns before {hot_start} omitted").

%!  direct_boundary_template(-Template) is multi.
%
%   The forms of the cold-history boundary of a direct turn (mode(direct)),
%   whose model reaches older turns through native tool calls instead of
%   plan steps; the placeholders and the order are
%   context_boundary_template/1's.
direct_boundary_template(
    "Cold history boundary: conversation {conversation} has durable history outside the guaranteed hot tail. Sequences 1..{cold_through} may be absent from this context; the hot tail begins at sequence {hot_start}. Nothing has been deleted. If the user refers to an earlier decision, fact, file, task or discussion that is not in context, call history_search before guessing (then history_slice or history_peek to read around a hit, by sequence). Refine the query when a result is truncated. Summaries may stand for old turns; the cold transcript is authoritative.").
direct_boundary_template(
    "Sequences 1..{cold_through} are stored but may be absent here. Before relying on them, call history_search.").
direct_boundary_template("Turns before {hot_start} omitted").

%!  context_no_reply_note(-Template) is det.
%
%   The note a pack sends, as an assistant message, right after a turn's
%   user message that got no reply: its turn failed, or its process died
%   (kill -9, a crash) before an answer was stored, and the user's next
%   message follows it. The transcript is never changed; the note is a
%   projection unit (section no_reply, its own ledger stage), sent with
%   that message or not at all, so the model is told the earlier message
%   went unanswered instead of being shown two user messages in a row,
%   which some chat templates refuse. In the template {seq} is the
%   unanswered message's sequence. Dynamic: a program may word its own,
%   or retract it to send none.
context_no_reply_note(
    "[No reply: the turn that received message {seq} ended before an answer was stored (it failed or was interrupted). The user's next message follows; answer it, and the earlier one if it still needs an answer.]").

/* --- Warm context --- */

%!  warm_fidelity(?Representation, ?Percent) is nondet.
%
%   What a representation of a warm artifact is worth, in percent of the
%   value of the raw messages it covers (context_utility/3's
%   older_message): choosing a summary excludes its raws, so the two compete
%   on equal terms. Verbatim is below 100 so that raw turns, which keep
%   their roles, win whenever they fit. Dynamic.
warm_fidelity(verbatim, 95).
warm_fidelity(detailed_summary, 90).
warm_fidelity(compact_summary, 70).
warm_fidelity(facts_only, 60).

%!  warm_signal_weight(?Kind, ?Weight) is nondet.
%
%   The weight of each kind of warm_signal(Key, Kind, Strength): an
%   artifact's rank is its last covered sequence times the recency weight
%   plus Strength times Weight for each signal about it, and the signal
%   part is added to every representation's utility. pinned (Strength > 0)
%   also makes the artifact mandatory. Dynamic.
warm_signal_weight(pinned, 100000).
warm_signal_weight(direct_reference, 1000).
warm_signal_weight(active_task, 600).
warm_signal_weight(unresolved, 400).
warm_signal_weight(dependency, 300).
warm_signal_weight(entity, 200).
warm_signal_weight(topic, 120).
warm_signal_weight(retrieval, 100).
warm_signal_weight(recency, 1).

/* --- Hooks --- */

%!  context_pack_hook(+Units, -Adjustments) is det.
%
%   A program's hook into conversation packs, called once per pack with the
%   bounded candidate batch: Units is a list of unit(Id, Section, Sequence,
%   Mandatory) and Adjustments a list of utility(Id, Delta), mandatory(Id),
%   requires(A, B) and excludes(A, B). lib declares it with no clauses: a
%   pack calls it only when the program has given it some (so an async
%   turn that needs no call back into Prolog runs without being awaited). A hook that fails makes the
%   pack error(context_budget_error([kind(pack_hook_failed), ...])) — it is
%   never read as "no adjustments" — and one that throws throws.
