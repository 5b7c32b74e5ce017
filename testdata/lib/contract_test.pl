% Suite for the error contract of the public predicates: an unbound
% argument, a wrong type and a bad option throw ISO errors naming the
% public predicate; what depends on state or data is an error(Reason)
% outcome; nothing internal reaches a program.
:- set_prolog_flag(double_quotes, chars).

store_(S) :- conversation_store_open(memory, ok(S)).
conv_(C) :-
    store_(S), conversation_create(S, [], ok(C)),
    conversation_append(C, message(user, "hello"), ok(_)).
handle_(H) :- context_register(text("abc"), [], ok(R)), record_get(R, handle, H).

% Conversations.
test(store_spec_unbound, [throws(error(instantiation_error, conversation_store_open/2))],
     conversation_store_open(_, _)).
test(store_spec_type, [throws(error(type_error(conversation_store_spec, 42), conversation_store_open/2))],
     conversation_store_open(42, _)).
test(store_spec_domain, [throws(error(domain_error(conversation_store_spec, disk), conversation_store_open/2))],
     conversation_store_open(disk, _)).
test(store_outside_the_state_dir_is_an_outcome,
     (   conversation_store_open(persist('/etc/rlmpl-not-here'), error(E)),
         record_get(E, detail, store_path_not_granted(_))
     )).
test(store_names_are_one_plain_segment,
     (   forall(member(Dir, ['.', '..', 'a/b', '']),
                (   conversation_store_open(persist(Dir), error(E)),
                    record_get(E, detail, store_path_refused(_))
                ))
     )).
test(store_close_type, [throws(error(type_error(conversation_store, foo), conversation_store_close/2))],
     conversation_store_close(foo, _)).
test(closed_store_is_an_outcome,
     (   store_(S), conversation_store_close(S, ok(closed)),
         conversation_create(S, [], error(E)), record_get(E, detail, closed_store)
     )).
test(create_unknown_option, [throws(error(domain_error(conversation_create_option, colour(red)), conversation_create/3))],
     (   store_(S), conversation_create(S, [colour(red)], _) )).
test(create_option_type, [throws(error(type_error(text, f(x)), conversation_create/3))],
     (   store_(S), conversation_create(S, [id(f(x))], _) )).
test(create_options_not_a_list, [throws(error(type_error(list, foo), conversation_create/3))],
     (   store_(S), conversation_create(S, foo, _) )).
test(open_id_unbound, [throws(error(instantiation_error, conversation_open/3))],
     (   store_(S), conversation_open(S, _, _) )).
test(open_missing_is_an_outcome,
     (   store_(S), conversation_open(S, nobody, error(E)), record_get(E, detail, not_found(nobody)) )).
test(list_limit_type, [throws(error(type_error(limit, 0), conversation_list/3))],
     (   store_(S), conversation_list(S, [limit(0)], _) )).
test(list_order_domain, [throws(error(domain_error(oneof([asc, desc]), up), conversation_list/3))],
     (   store_(S), conversation_list(S, [order(up)], _) )).
test(append_conversation_type, [throws(error(type_error(conversation, foo), conversation_append/3))],
     conversation_append(foo, message(user, "x"), _)).
test(append_message_unbound, [throws(error(instantiation_error, conversation_append/3))],
     (   conv_(C), conversation_append(C, _, _) )).
test(append_message_type, [throws(error(type_error(message, hello), conversation_append/3))],
     (   conv_(C), conversation_append(C, hello, _) )).
test(append_message_content_type, [throws(error(type_error(text, 42), conversation_append/3))],
     (   conv_(C), conversation_append(C, message(user, 42), _) )).
test(append_message_field_domain, [throws(error(domain_error(message_field, colour(red)), conversation_append/3))],
     (   conv_(C), conversation_append(C, message([role(user), content("x"), colour(red)]), _) )).
test(append_message_name_type, [throws(error(type_error(text, f(x)), conversation_append/3))],
     (   conv_(C), conversation_append(C, message([role(user), content("x"), name(f(x))]), _) )).
test(turn_message_content_type, [throws(error(type_error(text, 42), conversation_turn/4))],
     (   conv_(C), conversation_turn(C, message(user, 42), [], _) )).
test(turn_message_field_domain, [throws(error(domain_error(message_field, colour(red)), conversation_turn/4))],
     (   conv_(C), conversation_turn(C, message([role(user), content("x"), colour(red)]), [], _) )).
test(bad_messages_store_nothing,
     (   conv_(C),
         catch(conversation_append(C, message(user, 42), _), _, true),
         catch(conversation_turn(C, message([role(user), content("x"), colour(red)]), [], _), _, true),
         conversation_stats(C, ok(St)), record_get(St, messages, 1)
     )).
test(append_bad_field_is_an_outcome,
     (   conv_(C), conversation_append(C, message(robot, "x"), error(E)),
         record_get(E, detail, invalid_message(role)),
         conversation_stats(C, ok(St)), record_get(St, messages, 1)
     )).
test(append_option_type, [throws(error(type_error(text, f(x)), conversation_append/4))],
     (   conv_(C), conversation_append(C, message(user, "x"), [idempotency_key(f(x))], _) )).
test(message_seq_type, [throws(error(type_error(positive_integer, 0), conversation_message/3))],
     (   conv_(C), conversation_message(C, 0, _) )).
test(message_seq_not_integer, [throws(error(type_error(integer, one), conversation_message/3))],
     (   conv_(C), conversation_message(C, one, _) )).
test(messages_selector_domain, [throws(error(domain_error(conversation_selector, latest(3)), conversation_messages/4))],
     (   conv_(C), conversation_messages(C, latest(3), [], _) )).
test(search_query_unbound, [throws(error(instantiation_error, conversation_search/4))],
     (   conv_(C), conversation_search(C, _, [], _) )).
test(search_options_type, [throws(error(type_error(list, foo), conversation_search/4))],
     (   conv_(C), conversation_search(C, "x", foo, _) )).
test(search_option_value, [throws(error(type_error(positive_integer, 0), conversation_search/4))],
     (   conv_(C), conversation_search(C, "x", [max_results(0)], _) )).
test(cold_option_value, [throws(error(type_error(positive_integer, -1), conversation_cold_context/3))],
     (   conv_(C), conversation_cold_context(C, [max_bytes(-1)], _) )).
test(stats_type, [throws(error(type_error(conversation, foo), conversation_stats/2))],
     conversation_stats(foo, _)).
test(export_format_domain, [throws(error(domain_error(conversation_export_format, pdf), conversation_export/3))],
     (   conv_(C), conversation_export(C, pdf, _) )).
test(import_file_unbound, [throws(error(instantiation_error, conversation_import/3))],
     (   conv_(C), conversation_import(C, _, _) )).

% Packs and budgets.
test(policy_value_type, [throws(error(type_error(nonneg, x), context_policy/2))],
     context_policy([min_recent_turns(x)], _)).
test(pack_policy_not_a_list, [throws(error(type_error(list, foo), conversation_context_pack/3))],
     (   conv_(C), conversation_context_pack(C, [policy(foo)], _) )).
test(pack_units_unbound, [throws(error(instantiation_error, context_pack/4))],
     context_pack(_, [], [], _)).
test(pack_over_the_ceiling_is_an_outcome,
     (   conv_(C),
         conversation_context_pack(C, [policy([max_context_tokens(10), provider_context_tokens(10),
                                               reserve_output_tokens(5), safety_margin_tokens(0)])], error(E)),
         record_get(E, phase, pack)
     )).

% Tokens.
test(count_text_unbound, [throws(error(instantiation_error, token_count_text/3))],
     token_count_text(_, [], _)).
test(count_option_type, [throws(error(type_error(atom, 42), token_count_text/3))],
     token_count_text("x", [model(42)], _)).
test(count_unknown_encoding_is_an_outcome,
     (   token_count_text("x", [encoding(no_such)], error(E)), record_get(E, kind, unknown_encoding) )).
test(model_encoding_unbound, [throws(error(instantiation_error, token_model_encoding/2))],
     token_model_encoding(_, _)).

% Context handles.
test(register_source_unbound, [throws(error(instantiation_error, context_register/3))],
     context_register(_, [], _)).
test(handle_type, [throws(error(type_error(context_handle, 7), context_peek/4))],
     context_peek(7, head(1), [], _)).
test(limit_value, [throws(error(type_error(positive_number, 0), context_slice/5))],
     (   handle_(H), context_slice(H, 0, 1, [time_limit(0)], _) )).
test(unsupported_source_is_an_outcome,
     (   context_register(file('/etc/passwd'), [], error(E)), record_get(E, kind, unsupported_source) )).

% Completions.
test(completion_query_unbound, [throws(error(instantiation_error, rlm_completion/4))],
     rlm_completion(_, text("c"), [], _)).
test(completion_query_type, [throws(error(type_error(text, f(x)), rlm_completion/4))],
     rlm_completion(f(x), text("c"), [], _)).
test(completion_options_type, [throws(error(type_error(list, foo), rlm_completion/4))],
     rlm_completion("q", text("c"), foo, _)).
test(completion_unknown_option, [throws(error(domain_error(rlm_completion_option, colour(red)), rlm_completion/4))],
     rlm_completion("q", text("c"), [colour(red)], _)).
test(completion_option_value, [throws(error(type_error(positive_integer, 0), rlm_completion/4))],
     rlm_completion("q", text("c"), [planner_attempts(0)], _)).
test(completion_handler_type, [throws(error(type_error(callable, 42), rlm_completion/4))],
     rlm_completion("q", text("c"), [planner_handler(42)], _)).
test(completion_provider_type, [throws(error(type_error(provider, 42), rlm_completion/4))],
     rlm_completion("q", text("c"), [provider(42)], _)).
test(completion_provider_setting, [throws(error(domain_error(provider_option, colour(red)), rlm_completion/4))],
     rlm_completion("q", text("c"), [provider(provider(x, [colour(red)]))], _)).
test(completion_provider_setting_type, [throws(error(type_error(positive_number, 0), llm_query/3))],
     llm_query("q", [provider(provider(x, [timeout(0)]))], _)).
test(completion_budget_key, [throws(error(domain_error(completion_budget_option, max_tokens(5)), rlm_completion/4))],
     rlm_completion("q", text("c"), [budget([max_tokens(5)])], _)).
test(completion_tool_type, [throws(error(type_error(tool, foo), rlm_completion/4))],
     rlm_completion("q", text("c"), [planner_handler(p), tools([foo])], _)).
test(completion_cancel_token_type, [throws(error(type_error(atom, 7), rlm_completion/4))],
     rlm_completion("q", text("c"), [cancel_token(7)], _)).
test(llm_query_prompt_unbound, [throws(error(instantiation_error, llm_query/3))],
     llm_query(_, [], _)).
test(llm_query_option_value, [throws(error(type_error(positive_integer, 0), llm_query/3))],
     llm_query("q", [max_tokens(0)], _)).
test(llm_query_planner_option, [throws(error(domain_error(llm_query_option, planner_attempts(2)), llm_query/3))],
     llm_query("q", [planner_attempts(2)], _)).
test(rlm_query_depth_type, [throws(error(type_error(nonneg, -1), rlm_query/4))],
     rlm_query("q", text("c"), [depth(-1)], _)).
test(cancel_unbound, [throws(error(instantiation_error, rlm_cancel/1))],
     rlm_cancel(_)).
test(cancel_type, [throws(error(type_error(atom, 7), rlm_cancel/1))],
     rlm_cancel(7)).
test(cancel_unknown_token, [throws(error(existence_error(cancellation_token, foo), rlm_cancel/1))],
     rlm_cancel(foo)).
test(cancel_empty_token, [throws(error(existence_error(cancellation_token, ''), rlm_cancel/1))],
     rlm_cancel('')).
test(llm_query_number_prompt, [throws(error(type_error(text, 0), llm_query/3))],
     llm_query(0, [], _)).
test(llm_query_empty_prompt, [throws(error(domain_error(non_empty_text, ''), llm_query/3))],
     llm_query('', [], _)).
test(llm_query_empty_list_prompt, [throws(error(domain_error(non_empty_text, []), llm_query/3))],
     llm_query([], [], _)).
test(completion_empty_query, [throws(error(domain_error(non_empty_text, []), rlm_completion/4))],
     rlm_completion("", text("c"), [planner_handler(p)], _)).
test(rlm_query_number_query, [throws(error(type_error(text, 0), rlm_query/4))],
     rlm_query(0, text("c"), [], _)).
test(image_url_scheme_is_refused_and_nothing_stored,
     (   conv_(C),
         conversation_append(C, message(user, [text("see"), image_url("javascript:alert(1)")]), error(E)),
         record_get(E, detail, invalid_message('content[1].image_url.url')),
         conversation_append(C, message(user, [image_url("https://example.com/a.png"), image_url("data:image/png;base64,AA==")]), ok(_)),
         conversation_stats(C, ok(St)), record_get(St, messages, 2)
     )).
test(undefined_event_handler_writes_nothing,
     (   conv_(C),
         catch(conversation_turn(C, message(user, "hi"), [on_event(undefined_pred_)], _), Ball, true),
         Ball == error(existence_error(procedure, undefined_pred_/1), conversation_turn/4),
         conversation_stats(C, ok(St)), record_get(St, messages, 1)
     )).
test(builder_endpoint_unbound, [throws(error(instantiation_error, openai_compatible_provider/4))],
     openai_compatible_provider(_, none, m, _)).
test(builder_credential_not_shown, [throws(error(domain_error(credential, '<not shown>'), openai_compatible_provider/4))],
     openai_compatible_provider("http://x/v1", "sk-live-secret", m, _)).
test(provider_configuration_is_an_outcome,
     (   llm_query("q", [provider(provider(x, [base_url("ftp://x")]))], error(E)),
         E = provider_error(_), record_get(E, kind, configuration_error), record_get(E, field, base_url)
     )).
test(unsupported_completion_context_is_an_outcome,
     (   rlm_completion("q", file('/etc/passwd'), [planner_handler(p)], error(E)),
         record_get(E, kind, completion_fault)
     )).

% Nonsense that once succeeded silently (issue 36).
adapter_meta_(_, _).
adapter_op_(_, _, _, _).
test(policy_of_another_record, [throws(error(type_error(list, conversation_ref([])), context_policy/2))],
     context_policy(conversation_ref([]), _)).
test(policy_record_still_accepted,
     (   context_policy(context_policy([max_context_tokens(9000)]), ok(P)),
         record_get(P, max_context_tokens, 9000)
     )).
test(plan_budget_of_another_record, [throws(error(type_error(list, conversation_ref([])), plan_validate/4))],
     plan_validate(plan([final(literal("x"))]), [], conversation_ref([]), _)).
test(search_number_query, [throws(error(type_error(text, 0), conversation_search/4))],
     (   conv_(C), conversation_search(C, 0, [], _) )).
test(token_count_number_text, [throws(error(type_error(text, -1.0e308), token_count_text/3))],
     token_count_text(-1.0e308, [], _)).
test(adapter_handler_not_a_procedure, [throws(error(existence_error(procedure, message/4), context_adapter_register/5))],
     context_adapter_register(nonsense_a, [operations([peek])], message(user, 42), adapter_op_, _)).
test(adapter_handler_a_list, [throws(error(type_error(callable, [1,2,3]), context_adapter_register/5))],
     context_adapter_register(nonsense_b, [operations([peek])], adapter_meta_, [1,2,3], _)).
test(empty_id_is_no_fresh_id,
     (   store_(S), conversation_create(S, [id('')], error(E)), record_get(E, detail, invalid_argument(id)),
         conversation_list(S, [], ok([]))
     )).
test(unpaired_surrogates_do_not_collide,
     (   store_(S), atom_codes(A, [0'a, 0xD800]), atom_codes(B, [0'a, 0xDFFF]),
         conversation_create(S, [id(A)], error(E1)), record_get(E1, detail, invalid_argument(id)),
         conversation_create(S, [id(B)], error(E2)), record_get(E2, detail, invalid_argument(id))
     )).
test(metadata_record_of_another_tag, [throws(error(type_error(json, [a([b([c])])]), conversation_create/3))],
     (   store_(S), conversation_create(S, [metadata([k([a([b([c])])])])], _) )).
test(metadata_json_object_round_trips,
     (   store_(S), conversation_create(S, [metadata([k(json([a(1)]))])], ok(C)),
         record_get(C, metadata, metadata([k(json([a(1)]))]))
     )).
test(session_with_nul_is_invalid_everywhere,
     (   conv_(C), atom_codes(X, [0'a, 0, 0'b]),
         conversation_append(C, message(user, "hi"), [session(X)], error(E)),
         record_get(E, detail, invalid_message(session))
     )).
