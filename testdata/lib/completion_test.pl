% Suite for lib/rlm_completion.pl: the upstream completion scenarios with
% trusted Prolog handlers standing in for the planner and the model.
:- set_prolog_flag(double_quotes, chars).

direct_planner_(_, plan([final(literal("hello"))])).
search_planner_(_, plan([context(input(context), search("needle"), hits), final(var(hits))])).
json_planner_(_, 'Here is my plan: {"steps":[{"op":"final","value":"from json"}]}').
tool_planner_(_, plan([tool(double, literal(21), r), final(var(r))])).
model_planner_(_, plan([model(openrouter, literal("ping"), [max_tokens(10)], r), final(var(r))])).
double_(X, Y) :- Y is 2 * X.
echo_model_(Call, model_response([text(T), usage(usage([prompt_tokens(3), completion_tokens(2), total_tokens(5)]))])) :-
    record_get(Call, prompt, P), atom_chars(A, P), atom_concat('echo: ', A, T).

% Fails to parse on attempt 1, checks the error was fed back on attempt 2.
retry_planner_(Req, Reply) :-
    record_get(Req, attempt, A),
    (   A =:= 1
    ->  Reply = 'this is not a plan'
    ;   record_get(Req, prompt, P), atom_chars(PA, P),
        atomic_list_concat([_, _|_], 'previous answer', PA),
        Reply = plan([final(literal("recovered"))])
    ).

canceling_model_(Token, _, "late") :- rlm_cancel(Token).

test(direct_plan,
     (   rlm_completion("say hello", text("ctx"), [planner_handler(direct_planner_)], ok(R)),
         record_get(R, value, V), V == "hello"
     )).

test(search_then_final,
     (   rlm_completion("find it", text("alpha\nthe needle line\nomega"), [planner_handler(search_planner_)], ok(R)),
         record_get(R, value, [M]), record_get(M, index, 1)
     )).

test(json_plan_syntax,
     (   rlm_completion("q", text("c"), [planner_handler(json_planner_)], ok(R)),
         record_get(R, value, V), V == "from json"
     )).

test(tool_step,
     (   rlm_completion("double it", text("c"),
                        [planner_handler(tool_planner_),
                         tools([tool(double, "doubles a number", '{"type":"integer"}', double_)]),
                         capabilities([rlm, tool(double), context(search)])], ok(R)),
         record_get(R, value, 42)
     )).

test(tool_without_capability_is_denied_before_side_effects,
     (   rlm_completion("double it", text("c"),
                        [planner_handler(tool_planner_),
                         tools([tool(double, "doubles", '{}', double_)]),
                         capabilities([rlm])], error(E)),
         record_get(E, kind, capability_denied)
     )).

test(model_steps_use_the_model_handler,
     (   rlm_completion("q", text("c"), [planner_handler(model_planner_), model_handler(echo_model_)], ok(R)),
         record_get(R, value, V), record_get(V, text, T), T == "echo: ping",
         record_get(R, usage, U), record_get(U, model_calls, N), N >= 1
     )).

test(planner_retry_feeds_the_error_back,
     (   rlm_completion("q", text("c"), [planner_handler(retry_planner_), planner_attempts(2)], ok(R)),
         record_get(R, value, V), V == "recovered", record_get(R, planner_attempts, 2)
     )).

test(parse_failure_after_all_attempts,
     (   rlm_completion("q", text("c"), [planner_handler(retry_planner_), planner_attempts(1)], error(E)),
         record_get(E, kind, plan_parse_failed)
     )).

test(child_capability_widening_is_denied,
     (   rlm_completion("q", text("c"), [planner_handler(direct_planner_), capabilities([rlm]),
                                         child_capabilities([rlm, tool(x)])], error(E)),
         record_get(E, kind, completion_fault)
     )).

test(model_call_budget_is_enforced,
     (   rlm_completion("q", text("c"), [planner_handler(model_planner_), model_handler(echo_model_),
                                         budget([max_model_calls(1)])], error(E)),
         record_get(E, kind, K), memberchk(K, [budget_exceeded, budget_exhausted, model_call_budget_exhausted])
     )).

test(negative_budget_cost_is_a_fault,
     (   rlm_completion("q", text("c"), [planner_handler(direct_planner_), budget([max_cost_usd(-1)])], error(E)),
         record_get(E, kind, completion_fault)
     )).

test(cancelled_before_start,
     (   rlm_cancellation_token(T), rlm_cancel(T),
         rlm_completion("q", text("c"), [planner_handler(direct_planner_), cancel_token(T)], error(E)),
         record_get(E, kind, cancelled), record_get(E, token, T)
     )).

test(cancelled_during_a_model_call,
     (   rlm_cancellation_token(T),
         rlm_completion("q", text("c"), [planner_handler(model_planner_), model_handler(canceling_model_(T)),
                                         cancel_token(T)], error(E)),
         record_get(E, kind, cancelled)
     )).

test(unsupported_context_source,
     (   rlm_completion("q", file('/etc/passwd'), [planner_handler(direct_planner_)], error(E)),
         record_get(E, kind, completion_fault), record_get(E, detail, D), functor(D, context_registration_failed, 1)
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
         record_get(R, response, Resp), record_get(Resp, text, T), T == "echo: ping"
     )).

test(rlm_query_names_depth_and_metadata,
     (   rlm_query("what is in it", text("secret payload"), [model_handler(echo_model_)], ok(R)),
         record_get(R, depth, 1),
         record_get(R, response, Resp), record_get(Resp, text, T), atom_chars(A, T),
         \+ sub_atom(A, _, _, _, 'secret payload')
     )).

test(rlm_query_depth_over_budget,
     (   rlm_query("q", text("c"), [model_handler(echo_model_), depth(5)], error(E)),
         record_get(E, kind, completion_fault)
     )).

free_planner_(_, reply(plan([final(literal(free))]), usage([prompt_tokens(0), completion_tokens(0), total_tokens(0)]))).

test(declared_usage_is_charged_instead_of_an_estimate,
     (   rlm_completion("q", text("c"), [planner_handler(free_planner_)], ok(R)),
         record_get(R, usage, U), record_get(U, tokens_known, true), record_get(U, total_tokens, 0),
         record_get(R, value, free)
     )).

test(default_budget,
     (   default_completion_budget(B), record_get(B, max_model_calls, 4), record_get(B, max_iterations, 32) )).

% Handlers see the chat request's messages next to its prompt (the text of
% the last user message).
messages_planner_(Req, plan([model(openrouter, literal("ping"), [], r), final(var(r))])) :-
    record_get(Req, messages, [M]), record_get(M, role, user), record_get(M, content, C), record_get(Req, prompt, C).
messages_model_(Call, "seen") :-
    record_get(Call, messages, [M]), record_get(M, role, user), record_get(M, content, "ping"), record_get(Call, prompt, "ping").

test(handlers_see_the_messages,
     (   rlm_completion("q", text("c"), [planner_handler(messages_planner_), model_handler(messages_model_)], ok(R)),
         record_get(R, value, V), record_get(V, text, T), T == "seen"
     )).

% Upstream's planner reply: planner_output([plan(P), usage(U)]); counts it
% leaves out are 0.
upstream_planner_(_, planner_output([plan(plan([final(literal("up"))])), usage(usage([prompt_tokens(1), completion_tokens(1)]))])).
upstream_text_planner_(_, ok(planner_output([plan('{"steps":[{"op":"final","value":"json up"}]}'), usage([total_tokens(7)])]))).

test(planner_output_reply,
     (   rlm_completion("q", text("c"), [planner_handler(upstream_planner_)], ok(R)),
         record_get(R, value, V), V == "up",
         record_get(R, usage, U), record_get(U, total_tokens, 2), record_get(U, tokens_known, true), record_get(U, estimated_tokens, 0)
     )).

test(planner_output_reply_with_json_text,
     (   rlm_completion("q", text("c"), [planner_handler(upstream_text_planner_)], ok(R)),
         record_get(R, value, V), V == "json up",
         record_get(R, usage, U), record_get(U, total_tokens, 7)
     )).

% Providers: configuration problems are outcomes that name the field and
% never show a key; nothing configured says how to configure one.
test(nothing_configured_names_how,
     (   llm_query("hi", [], error(E)),
         record_get(E, kind, configuration_error), record_get(E, field, provider),
         record_get(E, message, M), atom_chars(A, M), sub_atom(A, _, _, _, 'providers.toml')
     )).

test(unknown_provider_needs_a_base_url,
     (   llm_query("hi", [provider(nowhere)], error(E)),
         record_get(E, kind, configuration_error), record_get(E, field, base_url), record_get(E, provider, nowhere)
     )).

test(raw_secret_is_refused_unshown,
     (   llm_query("hi", [provider(provider(mine, [base_url("http://127.0.0.1:9/v1"), credential("sk-live-secret-1234")]))], error(E)),
         record_get(E, kind, configuration_error), record_get(E, field, credential),
         \+ ( term_to_atom(E, A), sub_atom(A, _, _, _, 'sk-live') )
     )).

% provider(Name, Settings) may be written as the option itself, as the
% docs show it, wherever a provider option is read: the settings are read
% (a raw secret is refused as the nested form refuses it), and an unknown
% setting throws as it does there.
test(provider_settings_as_the_option_itself,
     (   Opt = provider(mine, [base_url("http://127.0.0.1:9/v1"), credential("sk-live-secret-1234")]),
         llm_query("hi", [Opt], error(E1)),
         rlm_completion("q", text("c"), [Opt], error(E2)),
         rlm_query("q", text("c"), [Opt], error(E3)),
         forall(member(E, [E1, E2, E3]),
                ( record_get(E, kind, configuration_error), record_get(E, field, credential),
                  record_get(E, provider, mine) ))
     )).

test(provider_settings_as_the_option_checked,
     [throws(error(domain_error(provider_option, colour(red)), _))],
     rlm_completion("q", text("c"), [provider(x, [colour(red)])], _)).

test(provider_settings_as_the_option_in_plan_run,
     plan_run(plan([final(literal("x"))]), [], [provider(mine, [base_url("http://127.0.0.1:9/v1")])], inputs([context(text("c"))]), ok(_))).

% rlm_error_message/2: one line of cause, whatever wraps it.
test(error_message_is_one_line_of_cause,
     (   llm_query("hi", [], error(E)),
         rlm_error_message(E, M),
         append("configuration_error: ", _, M), \+ member('\n', M),
         atom_chars(A, M), sub_atom(A, _, _, _, 'providers.toml'),
         rlm_error_message(error(E), M)
     )).

test(error_message_reads_iso_errors_and_terms,
     (   rlm_error_message(error(type_error(integer, abc), context(foo/1, _)), M1),
         atom_chars(A1, M1), sub_atom(A1, 0, _, _, 'foo/1: Type error'),
         rlm_error_message(something(else), M2), M2 == "something(else)"
     )).

test(hosted_preset_needs_a_model,
     (   llm_query("hi", [provider(openai)], error(E)),
         record_get(E, field, model), record_get(E, provider, openai)
     )).

test(missing_key_is_named,
     (   llm_query("hi", [provider(openai), model('gpt-4o')], error(E)),
         record_get(E, kind, missing_credential), record_get(E, credential, env('OPENAI_API_KEY')), record_get(E, phase, model)
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

% Upstream's recursive check runs on every plan a planner returns: a
% cyclic or non-ground nested plan is recursive_plan_rejected in phase
% validate, as plan_parse/2 and plan_validate/4 reject it, never a
% planner_error. Each is fed back and retried like a plan that does not
% parse.
:- dynamic(planner_calls_/1).
count_call_ :- ( retract(planner_calls_(N)) -> true ; N = 0 ), N1 is N + 1, assertz(planner_calls_(N1)).
cyclic_planner_(_, ok(planner_output([plan(P), usage([total_tokens(2)])]))) :-
    count_call_, C = plan([rlm(C, loop)]), P = plan([rlm(C, child), final(var(child))]).
nonground_planner_(_, plan([rlm(plan([final(literal(_))]), child), final(var(child))])).
test(planner_cyclic_plan_is_rejected_in_validate,
     (   retractall(planner_calls_(_)),
         rlm_completion("q", text("c"), [planner_handler(cyclic_planner_), planner_attempts(2)], error(E)),
         E = completion_error(_), record_get(E, kind, recursive_plan_rejected), record_get(E, phase, validate),
         record_get(E, detail, recursive_cycle(cyclic_term)), record_get(E, attempts, 2),
         planner_calls_(2)
     )).
test(planner_non_ground_plan_is_rejected_in_validate,
     (   rlm_completion("q", text("c"), [planner_handler(nonground_planner_), planner_attempts(1)], error(E)),
         record_get(E, kind, recursive_plan_rejected), record_get(E, phase, validate),
         record_get(E, detail, non_ground_recursive_plan)
     )).

% A planner may answer as a real model does, upstream's model_response:
% its text is the plan, its usage is charged.
response_planner_(_, ok(model_response([provider(fake), text(T), usage(usage([completion_tokens(1), prompt_tokens(2),
                                                                               total_tokens(3)]))]))) :-
    T = "{\"steps\":[{\"op\":\"final\",\"value\":\"from a response\"}]}".
bad_response_planner_(_, ok(model_response([text("not a typed plan"), usage(usage([total_tokens(3)]))]))).
test(planner_model_response_is_read_for_its_text,
     (   rlm_completion("q", text("c"), [planner_handler(response_planner_)], ok(R)),
         record_get(R, value, V), V == "from a response", record_get(R, usage/total_tokens, 3)
     )).
test(planner_retry_cannot_exceed_the_model_call_budget,
     (   rlm_completion("q", text("c"), [planner_handler(bad_response_planner_), planner_attempts(3),
                                         budget([max_model_calls(1)])], error(E)),
         record_get(E, phase, planner), record_get(E, kind, model_call_budget_exhausted)
     )).
