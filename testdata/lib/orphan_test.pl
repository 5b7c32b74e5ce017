% Suite for tool results that answer no call: refused at append, nothing
% written.
:- set_prolog_flag(double_quotes, chars).

test(an_orphan_tool_result_is_refused_and_not_stored,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(o1)], ok(C)),
         conversation_append(C, message(user, "look it up"), ok(_)),
         conversation_append(C, message([role(tool), tool_call_id(call_gone), content("42")]), error(E)),
         record_get(E, detail, orphan_tool_result), record_get(E, phase, append),
         conversation_stats(C, ok(St)), record_get(St, messages, 1)
     )).
