% Suite for lib/rlm_completion.pl: the upstream completion scenarios with
% trusted Prolog handlers standing in for the planner and the model.
:- set_prolog_flag(double_quotes, chars).

get_(Key, Record, Value) :-
    Record =.. [_, Props],
    P =.. [Key, Value],
    memberchk(P, Props).

direct_planner_(_, plan([final(literal("hello"))])).
search_planner_(_, plan([context(input(context), search("needle"), hits), final(var(hits))])).
json_planner_(_, 'Here is my plan: {"steps":[{"op":"final","value":"from json"}]}').
tool_planner_(_, plan([tool(double, literal(21), r), final(var(r))])).
model_planner_(_, plan([model(openrouter, literal("ping"), [max_tokens(10)], r), final(var(r))])).
double_(X, Y) :- Y is 2 * X.
echo_model_(Call, model_response([text(T), usage(usage([prompt_tokens(3), completion_tokens(2), total_tokens(5)]))])) :-
    get_(prompt, Call, P), atom_chars(A, P), atom_concat('echo: ', A, T).

% Fails to parse on attempt 1, checks the error was fed back on attempt 2.
retry_planner_(Req, Reply) :-
    get_(attempt, Req, A),
    (   A =:= 1
    ->  Reply = 'this is not a plan'
    ;   get_(prompt, Req, P), atom_chars(PA, P),
        atomic_list_concat([_, _|_], 'previous answer', PA),
        Reply = plan([final(literal("recovered"))])
    ).

canceling_model_(Token, _, "late") :- rlm_cancel(Token).

test(direct_plan,
     (   rlm_completion("say hello", text("ctx"), [planner_handler(direct_planner_)], ok(R)),
         get_(value, R, V), V == "hello"
     )).

test(search_then_final,
     (   rlm_completion("find it", text("alpha\nthe needle line\nomega"), [planner_handler(search_planner_)], ok(R)),
         get_(value, R, [M]), get_(index, M, 1)
     )).

test(json_plan_syntax,
     (   rlm_completion("q", text("c"), [planner_handler(json_planner_)], ok(R)),
         get_(value, R, V), V == "from json"
     )).

test(tool_step,
     (   rlm_completion("double it", text("c"),
                        [planner_handler(tool_planner_),
                         tools([tool(double, "doubles a number", '{"type":"integer"}', double_)]),
                         capabilities([rlm, tool(double), context(search)])], ok(R)),
         get_(value, R, 42)
     )).

test(tool_without_capability_is_denied_before_side_effects,
     (   rlm_completion("double it", text("c"),
                        [planner_handler(tool_planner_),
                         tools([tool(double, "doubles", '{}', double_)]),
                         capabilities([rlm])], error(E)),
         get_(kind, E, capability_denied)
     )).

test(model_steps_use_the_model_handler,
     (   rlm_completion("q", text("c"), [planner_handler(model_planner_), model_handler(echo_model_)], ok(R)),
         get_(value, R, V), get_(text, V, T), T == "echo: ping",
         get_(usage, R, U), get_(model_calls, U, N), N >= 1
     )).

test(planner_retry_feeds_the_error_back,
     (   rlm_completion("q", text("c"), [planner_handler(retry_planner_), planner_attempts(2)], ok(R)),
         get_(value, R, V), V == "recovered", get_(planner_attempts, R, 2)
     )).

test(parse_failure_after_all_attempts,
     (   rlm_completion("q", text("c"), [planner_handler(retry_planner_), planner_attempts(1)], error(E)),
         get_(kind, E, plan_parse_failed)
     )).

test(child_capability_widening_is_denied,
     (   rlm_completion("q", text("c"), [planner_handler(direct_planner_), capabilities([rlm]),
                                         child_capabilities([rlm, tool(x)])], error(E)),
         get_(kind, E, completion_fault)
     )).

test(model_call_budget_is_enforced,
     (   rlm_completion("q", text("c"), [planner_handler(model_planner_), model_handler(echo_model_),
                                         budget([max_model_calls(1)])], error(E)),
         get_(kind, E, K), memberchk(K, [budget_exceeded, budget_exhausted, model_call_budget_exhausted])
     )).

test(negative_budget_cost_is_a_fault,
     (   rlm_completion("q", text("c"), [planner_handler(direct_planner_), budget([max_cost_usd(-1)])], error(E)),
         get_(kind, E, completion_fault)
     )).

test(cancelled_before_start,
     (   rlm_cancellation_token(T), rlm_cancel(T),
         rlm_completion("q", text("c"), [planner_handler(direct_planner_), cancel_token(T)], error(E)),
         get_(kind, E, cancelled), get_(token, E, T)
     )).

test(cancelled_during_a_model_call,
     (   rlm_cancellation_token(T),
         rlm_completion("q", text("c"), [planner_handler(model_planner_), model_handler(canceling_model_(T)),
                                         cancel_token(T)], error(E)),
         get_(kind, E, cancelled)
     )).

test(unsupported_context_source,
     (   rlm_completion("q", file('/etc/passwd'), [planner_handler(direct_planner_)], error(E)),
         get_(kind, E, completion_fault), get_(detail, E, D), functor(D, context_registration_failed, 1)
     )).

test(unknown_option_throws,
     [throws(error(domain_error(rlm_completion_option, colour(red)), rlm_completion/4))],
     rlm_completion("q", text("c"), [colour(red)], _)).

test(ephemeral_context_is_deleted,
     (   rlm_completion("q", text("c"), [planner_handler(direct_planner_)], ok(_)),
         true
     )).

test(llm_query_direct,
     (   llm_query("ping", [model_handler(echo_model_)], ok(R)),
         get_(response, R, Resp), get_(text, Resp, T), T == "echo: ping"
     )).

test(rlm_query_names_depth_and_metadata,
     (   rlm_query("what is in it", text("secret payload"), [model_handler(echo_model_)], ok(R)),
         get_(depth, R, 1),
         get_(response, R, Resp), get_(text, Resp, T), atom_chars(A, T),
         \+ sub_atom(A, _, _, _, 'secret payload')
     )).

test(rlm_query_depth_over_budget,
     (   rlm_query("q", text("c"), [model_handler(echo_model_), depth(5)], error(E)),
         get_(kind, E, completion_fault)
     )).

free_planner_(_, reply(plan([final(literal(free))]), usage([prompt_tokens(0), completion_tokens(0), total_tokens(0)]))).

test(declared_usage_is_charged_instead_of_an_estimate,
     (   rlm_completion("q", text("c"), [planner_handler(free_planner_)], ok(R)),
         get_(usage, R, U), get_(tokens_known, U, true), get_(total_tokens, U, 0),
         get_(value, R, free)
     )).

test(default_budget,
     (   default_completion_budget(B), get_(max_model_calls, B, 4), get_(max_iterations, B, 32) )).

% Handlers see the chat request's messages next to its prompt (the text of
% the last user message).
messages_planner_(Req, plan([model(openrouter, literal("ping"), [], r), final(var(r))])) :-
    get_(messages, Req, [M]), get_(role, M, user), get_(content, M, C), get_(prompt, Req, C).
messages_model_(Call, "seen") :-
    get_(messages, Call, [M]), get_(role, M, user), get_(content, M, "ping"), get_(prompt, Call, "ping").

test(handlers_see_the_messages,
     (   rlm_completion("q", text("c"), [planner_handler(messages_planner_), model_handler(messages_model_)], ok(R)),
         get_(value, R, V), get_(text, V, T), T == "seen"
     )).

% Upstream's planner reply: planner_output([plan(P), usage(U)]); counts it
% leaves out are 0.
upstream_planner_(_, planner_output([plan(plan([final(literal("up"))])), usage(usage([prompt_tokens(1), completion_tokens(1)]))])).
upstream_text_planner_(_, ok(planner_output([plan('{"steps":[{"op":"final","value":"json up"}]}'), usage([total_tokens(7)])]))).

test(planner_output_reply,
     (   rlm_completion("q", text("c"), [planner_handler(upstream_planner_)], ok(R)),
         get_(value, R, V), V == "up",
         get_(usage, R, U), get_(total_tokens, U, 2), get_(tokens_known, U, true), get_(estimated_tokens, U, 0)
     )).

test(planner_output_reply_with_json_text,
     (   rlm_completion("q", text("c"), [planner_handler(upstream_text_planner_)], ok(R)),
         get_(value, R, V), V == "json up",
         get_(usage, R, U), get_(total_tokens, U, 7)
     )).

% Providers: configuration problems are outcomes that name the field and
% never show a key; nothing configured says how to configure one.
test(nothing_configured_names_how,
     (   llm_query("hi", [], error(E)),
         get_(kind, E, configuration_error), get_(field, E, provider),
         get_(message, E, M), atom_chars(A, M), sub_atom(A, _, _, _, 'providers.toml')
     )).

test(unknown_provider_needs_a_base_url,
     (   llm_query("hi", [provider(nowhere)], error(E)),
         get_(kind, E, configuration_error), get_(field, E, base_url), get_(provider, E, nowhere)
     )).

test(raw_secret_is_refused_unshown,
     (   llm_query("hi", [provider(provider(mine, [base_url("http://127.0.0.1:9/v1"), credential("sk-live-secret-1234")]))], error(E)),
         get_(kind, E, configuration_error), get_(field, E, credential),
         \+ ( term_to_atom(E, A), sub_atom(A, _, _, _, 'sk-live') )
     )).

test(hosted_preset_needs_a_model,
     (   llm_query("hi", [provider(openai)], error(E)),
         get_(field, E, model), get_(provider, E, openai)
     )).

test(missing_key_is_named,
     (   llm_query("hi", [provider(openai), model('gpt-4o')], error(E)),
         get_(kind, E, missing_credential), get_(credential, E, env('OPENAI_API_KEY')), get_(phase, E, model)
     )).

test(planner_handler_needs_no_provider,
     (   rlm_completion("q", text("c"), [planner_handler(direct_planner_)], ok(_)) )).

test(openai_compatible_builder,
     (   openai_compatible_provider("http://127.0.0.1:8080/v1", none, tiny, P),
         P = provider(openai_compatible, S), memberchk(credential(none), S), memberchk(timeout(30), S)
     )).

test(openrouter_builder_default_model,
     (   openrouter_provider(M, provider(openrouter, S)), M == 'openrouter/free',
         memberchk(credential(env('OPENROUTER_API_KEY')), S)
     )).

test(default_provider_order,
     (   findall(N, default_provider(N), Ns), Ns = [openrouter|_] )).
