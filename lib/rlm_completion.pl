/** <module> Bounded recursive completions

rlm_completion/4 asks a planner model for a typed plan over an opaque
context, validates the whole plan before any side effect, and executes it
under a hard budget (steps, model calls, tool calls, context operations,
output bytes, tokens, cost, wall time). The planner sees the goal, the
context metadata (never the payload), its capabilities, the tool schemas
and the plan grammar with an example; it may answer in JSON or as a term
plan([...]) (read by a restricted reader: no variables, bounded size,
never called). A parse or validation failure is retried with the error fed
back. Cancellation and time limits always win and always run cleanup.
The predicates are defined in Go (host/pred_completion.go over host/plan).

Options (schemas: rlm_option/4 in rlm_policy.pl; an unknown one throws
domain_error(Pred_option, O), a wrong value the error must_be/2 would):

  - planner_handler(H): call(H, planner_request([attempt(A), depth(D),
    max_tokens(M), messages(Ms), prompt(P)]), Reply), where Ms is the chat
    request, [message([content(C), role(R)]), ...], and P the text of its
    last user message; Reply a plan term, plan text,
    planner_output([plan(P), usage(U)]) (upstream's reply: counts U leaves
    out are 0), model_response([text(T), usage(U), ...]) (upstream's real
    model reply: T is the plan text), reply(PlanOrText, usage([total_tokens(N),
    ...])) (counts it leaves out are unknown, and charged a conservative
    estimate), ok(Reply) or error(E). A plan term runs upstream's
    recursive check first: cyclic, or holding a variable, it is
    recursive_plan_rejected in phase validate (fed back and retried like
    a plan that does not parse). Default: the provider's model plans.
  - model_handler(H): call(H, model_call([depth, max_tokens, messages,
    prompt, provider, reason]), Reply) answers llm_query/3, rlm_query/4 and
    every model step of a plan; Reply is text or model_response([text(T),
    usage(usage([prompt_tokens(P), completion_tokens(C), cost(USD)]))]).
  - provider(P), model(M): the OpenAI-compatible provider, P a name or a
    provider term (below), which may stand as the option itself:
    provider(vllm, [base_url(U)]) is provider(provider(vllm,
    [base_url(U)])); model(M) overrides its model.
  - capabilities(L), child_capabilities(L): rlm, parallel, retry,
    checkpoint, context(Op), model(P), tool(N). Children are narrowed,
    never widened.
  - tools([tool(Name, Description, SchemaText, Handler)]): call(Handler,
    Args, Result).
  - context_options(L): max_results, max_bytes, time_limit of context steps.
  - planner_attempts(N), planner_max_tokens(N), planner_instruction(Text).
  - budget(L): overlay on default_completion_budget/1.
  - cancel_token(T): from rlm_cancellation_token/1.
  - llm_query/3 and rlm_query/4 also take max_tokens(N), temperature(T)
    and on_delta(Closure): the call streams, and call(Closure, Delta) runs
    for each Delta, one of text(T), reasoning(T), tool_call(Index, Id,
    Name, ArgumentsText), finish(Reason), usage(usage([...])); a closure
    that fails or throws stops the stream. rlm_query/4 takes depth(N).

Providers. A provider is a name or provider(Name, Settings), Settings a
list of api(openai) or api(anthropic) (the wire format: chat completions,
the default, or Anthropic's Messages API), base_url(URL) or
endpoint(URL) (the API root, or the full .../chat/completions or
.../messages URL), credential(env(Variable)) or credential(none),
model(M), timeout(Seconds), headers([Name-Value, ...]),
structured_output(Bool) and cache_ttl(T) ("5m" or "1h": how long the
prefixes a turn marks for Anthropic's cache are kept). Each setting is looked up, in order, in the call
(the provider term, model(M)), the configuration file
($XDG_CONFIG_HOME/rlmpl/providers.toml, which the CLI reads), the
environment's conventions (OPENAI_BASE_URL for openai,
ANTHROPIC_BASE_URL for anthropic, OLLAMA_HOST for ollama) and the preset
of that name: openai, anthropic (api(anthropic), model
claude-sonnet-4-5, ANTHROPIC_API_KEY), openrouter (model
openrouter/free), deepseek (deepseek-chat), ollama, vllm and llamacpp
(the last three local, with no key). Keys are read from the environment
when each request is made and appear in no outcome, trace or recording
(nor does any headers(...) value: each is redacted as a secret); a
credential written as anything but env(Variable) or none is refused
without being shown. A call that names no provider uses the file's
default, else the first default_provider/1 whose key is in the
environment. structured_output(true) (the default for openai, ollama,
vllm and llamacpp) makes planner requests carry the plan's JSON schema as
their response_format, so the server samples only well-formed plans.

Errors. error(provider_error([field(F), kind(configuration_error),
message(M), provider(P)])) for configuration; error(provider_error([
attempts(N), kind(K), message(M), phase(P), retryable(B), status(S), ...]))
when a call fails (K one of http_status, provider_error, transport,
timeout, malformed_response, missing_credential (with
credential(env(V))), invalid_request, context_length_exceeded (the
provider refused the prompt as longer than the model's window));
completion_error and plan_error records otherwise (upstream's
catalogue). rlm_error_message/2 reads any
of them, and a turn's conversation_error, as one line of cause for
people; the term itself holds the detail.

Exports:
    rlm_completion/4             % +Query, +Context, +Options, -Outcome
    llm_query/3                  % +Prompt, +Options, -Outcome
    rlm_query/4                  % +Query, +SubContext, +Options, -Outcome
    rlm_cancellation_token/1     % -Token
    rlm_cancel/1                 % +Token
    default_completion_budget/1  % -Budget
    openai_compatible_provider/4 % +Endpoint, +Credential, +Model, -Provider
    openrouter_provider/2        % ?Model, -Provider
    default_provider/1           % ?Name
    rlm_error_message/2          % +Error, -Message
*/
:- set_prolog_flag(double_quotes, chars).
:- dynamic(default_provider/1).

/* --- Public API (defined in Go) --- */

%!  rlm_completion(+Query, +Context, +Options, -Outcome) is det.
%
%   Context is text(T), terms(L) (registered for the call and deleted
%   after), a context_handle(Id, V) or a context_ref record (the caller's,
%   kept). Outcome is ok(completion_result([budget_remaining,
%   checkpoints, child_capabilities, plan, planner_attempts, recursion,
%   remaining, trajectory, transitions, usage, used, value(V), vars])) or
%   error(E) with E a completion_error, plan_error or provider_error
%   record. recursion([calls(N), children(K), depth(D), fingerprints(Fs),
%   max_depth(M), recursive_calls(N)]) says what recursion the completion
%   did: the rlm steps its plan holds (calls, and upstream's name
%   recursive_calls), the child completions it ran (children), the
%   deepest nesting reached (depth) and planned (max_depth);
%   vars(bindings([Name(V), ...])) are the root plan's bindings;
%   budget_remaining is remaining under upstream's name; transitions are
%   upstream's plan_transition([bind(B), operation(Op), sequence(N),
%   status(ok)]) records, one per finished plan step in the trajectory's
%   order (Op a term: context(search), tool(t), rlm, final, ...). Capabilities, here and in every error detail
%   (child_capability_denied(C), widening_denied's lists), are terms such
%   as tool(search), never quoted text.
%
%   ?- rlm_completion("say hi", text("..."), [planner_handler(p)], ok(R)).

%!  llm_query(+Prompt, +Options, -Outcome) is det.
%
%   Prompt, like the Query of rlm_completion/4 and rlm_query/4, is
%   non-empty text: a number is type_error(text, N), empty text
%   domain_error(non_empty_text, T).
%
%   One bounded direct model call: ok(llm_result([elapsed_ms, response(
%   model_response([model, reasoning, text])), trajectory([model_event([
%   depth(0), elapsed_ms, id(model_Hash), parent(root_planner),
%   provider(P), reason(direct), selected_model(M), usage(U)])]),
%   usage(U)])), as upstream (rlm_query/4's event has reason
%   recursive_subquery and its depth). With
%   on_delta(Closure) the answer streams through Closure as it comes.
%
%   ?- llm_query("hi", [provider(llamacpp), on_delta(print_delta)], O).

%!  rlm_query(+Query, +SubContext, +Options, -Outcome) is det.
%
%   A recursive subquery: one model call whose prompt names the depth
%   (depth(N), default 1, at most the budget's max_recursion_depth), the
%   goal and the sub-context's metadata — never its payload.

%!  rlm_cancellation_token(-Token) is det.
%
%   A new active token for the cancel_token(T) option.

%!  rlm_cancel(+Token) is det.
%
%   Cancels Token: completions running under it stop (outcome
%   completion_error kind cancelled, with token(Token)) and later ones do
%   not start. A Token that rlm_cancellation_token/1 did not make is
%   existence_error(cancellation_token, Token).

%!  default_completion_budget(-Budget) is det.
%
%   completion_budget([max_concurrent_subcalls(2), max_context_ops(8),
%   max_cost_usd(0.25), max_iterations(32), max_model_calls(4),
%   max_output_bytes(32768), max_recursion_depth(1), max_tool_calls(4),
%   max_total_tokens(8192), time_limit(30.0), unknown_call_cost_usd(0.0)]).

%!  openai_compatible_provider(+Endpoint, +Credential, +Model, -Provider) is det.
%
%   Provider is upstream's provider(openai_compatible, [endpoint(Endpoint),
%   credential(Credential), model(Model), timeout(30)]). Credential is
%   env(Variable) or none; anything else throws domain_error(credential, _)
%   without showing it (it is often a pasted key).
%
%   ?- openai_compatible_provider("http://127.0.0.1:8080/v1", none, tiny, P).

%!  openrouter_provider(?Model, -Provider) is det.
%
%   Provider is upstream's provider(openrouter, [endpoint(URL),
%   credential(env('OPENROUTER_API_KEY')), model(Model), timeout(30)]). An
%   unbound Model is bound to $OPENROUTER_TEST_MODEL when that is set, else
%   openrouter/free.

/* --- Providers --- */

%!  default_provider(?Name) is nondet.
%
%   The providers a call that names none may use, in order: the first
%   whose key is in the environment, unless the configuration file names a
%   default. With none of them, the outcome is
%   error(provider_error([field(provider), kind(configuration_error),
%   message(M)])), M saying how to configure one: nothing is sent to a
%   provider the user did not choose. openrouter first, as upstream.
%   Dynamic: a program may put its own first.
default_provider(openrouter).
default_provider(openai).
default_provider(deepseek).
default_provider(anthropic).

/* --- Error messages --- */

%!  rlm_error_message(+Error, -Message) is det.
%
%   Message is one line of text saying why Error happened, for people to
%   read: Error is an error(Reason) outcome or its Reason — any error
%   record Tag([..., message(M), ...]), such as a turn's
%   conversation_error, whose detail it follows down to the innermost
%   error record it wraps (at most four levels), and reads as "Kind: M" —
%   or an ISO error(Formal, Context), read as print_message/2 prints it;
%   anything else is written with print/1. Line breaks become spaces.
%
%   The full term is Error itself: a turn's error carries its ledger and
%   user message, kilobytes of detail, so print it (print/1, ~p, ~q) only
%   when that is asked for.
%
%   ?- llm_query("hi", [provider(nowhere)], error(E)), rlm_error_message(E, M),
%      format("~s~n", [M]).
%   configuration_error: unknown provider: give its base_url (...)
rlm_error_message(Error, Message) :-
    (   Error = error(Reason), error_record_(Reason, _)
    ->  error_line_(Reason, Line)
    ;   error_record_(Error, _)
    ->  error_line_(Error, Line)
    ;   Error = error(_, _)
    ->  message_to_codes(Error, error, Codes),
        atom_codes(A, Codes),
        atom_chars(A, Line)
    ;   format(chars(Line), "~p", [Error])
    ),
    maplist(one_line_char_, Line, Message).

% error_line_(+Record, -Chars): the innermost error record's "Kind: M".
error_line_(Record, Line) :-
    once(innermost_error_(Record, 4, Inner)),
    error_record_(Inner, Props),
    memberchk(message(M), Props),
    text_chars_(M, Cs),
    (   memberchk(kind(K), Props)
    ->  format(chars(Line), "~w: ~s", [K, Cs])
    ;   Line = Cs
    ).

% innermost_error_(+Record, +Depth, -Inner): the deepest error record
% reached through detail(...) and the arguments of what it holds.
innermost_error_(Record, Depth, Inner) :-
    Depth > 0,
    error_record_(Record, Props),
    memberchk(detail(Detail), Props),
    Depth1 is Depth - 1,
    wrapped_error_(Detail, Wrapped),
    innermost_error_(Wrapped, Depth1, Inner).
innermost_error_(Record, _, Record).

% wrapped_error_(+Detail, -Record): Detail is an error record, or holds one
% as an argument (completion_failed(completion_error([...]))).
wrapped_error_(Detail, Detail) :-
    error_record_(Detail, _).
wrapped_error_(Detail, Record) :-
    compound(Detail),
    Detail =.. [_|Args],
    member(Record, Args),
    error_record_(Record, _).

% error_record_(@Term, -Props): Term is a record Tag(Props) with a message.
error_record_(Term, Props) :-
    compound(Term),
    Term =.. [_, Props],
    is_list(Props),
    memberchk(message(_), Props).

% text_chars_(+Text, -Chars): an atom, chars or codes as chars.
text_chars_(T, Cs) :-
    (   atom(T)
    ->  atom_chars(T, Cs)
    ;   is_list(T), T = [C|_], integer(C)
    ->  atom_codes(A, T), atom_chars(A, Cs)
    ;   is_list(T)
    ->  Cs = T
    ;   format(chars(Cs), "~w", [T])
    ).

one_line_char_(C, D) :-
    (   C == '\n'
    ->  D = ' '
    ;   D = C
    ).
