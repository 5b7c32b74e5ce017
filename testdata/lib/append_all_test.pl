% Suite for conversation_append_all/4: one transaction, per-item keys,
% validated whole before anything is written.
:- set_prolog_flag(double_quotes, chars).

test(a_batch_is_appended_in_order_with_one_record_each,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(b1)], ok(C)),
         conversation_append(C, message(user, "first"), ok(_)),
         conversation_append_all(C, [message(user, "look it up"),
                                     message([role(assistant), tool_calls([tool_call([id(c1), name(lookup), arguments("{}")])])]),
                                     message([role(tool), tool_call_id(c1), content("42")])-[idempotency_key(k3), session(s1)],
                                     message(assistant, "it is 42")], [], ok(Rs)),
         maplist([R, N]>>record_get(R, sequence, N), Rs, [2, 3, 4, 5]),
         nth1(3, Rs, R3), record_get(R3, session, "s1"),
         conversation_stats(C, ok(St)), record_get(St, messages, 5)
     )).

test(a_retried_batch_writes_nothing_twice,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(b2)], ok(C)),
         Items = [message(user, "a")-[idempotency_key(ka)], message(user, "b")-[idempotency_key(kb)]],
         conversation_append_all(C, Items, [], ok(R1)),
         conversation_append_all(C, Items, [], ok(R2)),
         R1 == R2,
         conversation_stats(C, ok(St)), record_get(St, messages, 2),
         % the same key with other content: the whole batch is refused
         conversation_append_all(C, [message(user, "c"), message(user, "other")-[idempotency_key(ka)]], [], error(E)),
         record_get(E, detail, idempotency_key_reused),
         conversation_stats(C, ok(St2)), record_get(St2, messages, 2)
     )).

test(a_bad_item_writes_nothing,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(b3)], ok(C)),
         conversation_append_all(C, [message(user, "fine"), message([role(tool), tool_call_id(gone), content("x")])], [], error(E)),
         record_get(E, detail, orphan_tool_result),
         catch((conversation_append_all(C, [message(user, 42)], [], _), fail), error(type_error(text, 42), _), true),
         catch((conversation_append_all(C, [message(user, "x")-[colour(red)]], [], _), fail), error(domain_error(conversation_append_option, colour(red)), _), true),
         catch((conversation_append_all(C, [], [colour(red)], _), fail), error(domain_error(conversation_append_all_option, colour(red)), _), true),
         conversation_stats(C, ok(St)), record_get(St, messages, 0),
         conversation_append_all(C, [], [], ok([]))
     )).

test(an_invalid_item_is_named_by_its_place,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(b4)], ok(C)),
         conversation_append_all(C, [message(user, "a"), message(user, "b"), message(tool_log, "c")], [], error(E)),
         record_get(E, detail, invalid_message(role)),
         record_get(E, message, M), sub_string(M, 0, _, _, "entry 3: "),
         conversation_stats(C, ok(St)), record_get(St, messages, 0)
     )).
