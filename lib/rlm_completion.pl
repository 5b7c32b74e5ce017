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

Options (an unknown one throws domain_error(completion_option, O)):

  - planner_handler(H): call(H, planner_request([attempt(A), depth(D),
    max_tokens(M), messages(Ms), prompt(P)]), Reply), where Ms is the chat
    request, [message([content(C), role(R)]), ...], and P the text of its
    last user message; Reply a plan term, plan text,
    reply(PlanOrText, usage([total_tokens(N), ...])) to declare what the
    call used (without it the budget charges a conservative estimate),
    ok(Reply) or error(E). Default: the provider's model plans.
  - model_handler(H): call(H, model_call([depth, max_tokens, messages,
    prompt, provider, reason]), Reply) answers llm_query/3, rlm_query/4 and every
    model step of a plan; Reply is text or model_response([text(T),
    usage(usage([prompt_tokens(P), completion_tokens(C), cost(USD)]))]).
  - provider(Name), model(M): the OpenAI-compatible provider (a host
    configured name or a preset: openai, openrouter, deepseek, ollama,
    vllm, llamacpp; credentials are read from the environment at request
    time and never logged).
  - capabilities(L), child_capabilities(L): rlm, parallel, retry,
    checkpoint, context(Op), model(P), tool(N). Children are narrowed,
    never widened.
  - tools([tool(Name, Description, SchemaText, Handler)]): call(Handler,
    Args, Result).
  - context_options(L): max_results, max_bytes, time_limit of context steps.
  - planner_attempts(N), planner_max_tokens(N), planner_instruction(Text).
  - budget(L): overlay on default_completion_budget/1 (unknown keys are a
    completion_fault).
  - cancel_token(T): from rlm_cancellation_token/1.

Exports:
    rlm_completion/4             % +Query, +Context, +Options, -Outcome
    llm_query/3                  % +Prompt, +Options, -Outcome
    rlm_query/4                  % +Query, +SubContext, +Options, -Outcome
    rlm_cancellation_token/1     % -Token
    rlm_cancel/1                 % +Token
    default_completion_budget/1  % -Budget
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API --- */

%!  rlm_completion(+Query, +Context, +Options, -Outcome) is det.
%
%   Context is text(T), terms(L) (registered for the call and deleted
%   after), a context_handle(Id, V) or a context_ref record (the caller's,
%   kept). Outcome is ok(completion_result([checkpoints, child_capabilities,
%   plan, planner_attempts, remaining, trajectory, usage, used, value(V)]))
%   or error(E) with E a completion_error or plan_error record.
%
%   ?- rlm_completion("say hi", text("..."), [planner_handler(p)], ok(R)).
rlm_completion(Query, Context, Options, Outcome) :-
    rlm_complete_(Query, Context, Options, Outcome).

%!  llm_query(+Prompt, +Options, -Outcome) is det.
%
%   One bounded direct model call: ok(llm_result([elapsed_ms, response(
%   model_response([model, reasoning, text])), usage(U)])).
llm_query(Prompt, Options, Outcome) :-
    llm_query_(Prompt, Options, Outcome).

%!  rlm_query(+Query, +SubContext, +Options, -Outcome) is det.
%
%   A recursive subquery: one model call whose prompt names the depth
%   (depth(N), default 1, at most the budget's max_recursion_depth), the
%   goal and the sub-context's metadata — never its payload.
rlm_query(Query, SubContext, Options, Outcome) :-
    rlm_query_(Query, SubContext, Options, Outcome).

%!  rlm_cancellation_token(-Token) is det.
%
%   A new active token for the cancel_token(T) option.
rlm_cancellation_token(Token) :-
    rlm_cancellation_token_(Token).

%!  rlm_cancel(+Token) is det.
%
%   Cancels Token: completions running under it stop (outcome
%   completion_error kind cancelled) and later ones do not start.
rlm_cancel(Token) :-
    rlm_cancel_(Token).

%!  default_completion_budget(-Budget) is det.
%
%   completion_budget([max_concurrent_subcalls(2), max_context_ops(8),
%   max_cost_usd(0.25), max_iterations(32), max_model_calls(4),
%   max_output_bytes(32768), max_recursion_depth(1), max_tool_calls(4),
%   max_total_tokens(8192), time_limit(30.0), unknown_call_cost_usd(0.0)]).
default_completion_budget(Budget) :-
    default_completion_budget_(Budget).
