% Suite for oversized messages: lib's context_excerpt/2 lets a hot message
% too large for the ceiling be sent as an excerpt that says where the rest
% is, instead of failing every later pack.
:- set_prolog_flag(double_quotes, chars).

test(an_oversized_reply_is_packed_as_an_excerpt,
     (   conversation_store_open(memory, ok(S)),
         conversation_create(S, [id(x1)], ok(C)),
         length(L, 750), maplist(=('the lease protocol needs fencing tokens. '), L),
         atomic_list_concat(L, Huge),
         conversation_append(C, message(user, "explain leases"), ok(_)),
         conversation_append(C, message(assistant, Huge), ok(_)),
         conversation_append(C, message(user, "shorter please"), ok(_)),
         conversation_context_pack(C, [policy([max_context_tokens(3000), provider_context_tokens(3000),
                                               reserve_output_tokens(100), safety_margin_tokens(10),
                                               min_recent_turns(3)]),
                                       token_options([model('gpt-4o')])], ok(P)),
         record_get(P, selected, Sel),
         member(X, Sel), record_get(X, id, conversation_message_2),
         record_get(X, kind, excerpt), record_get(X, text, Text),
         append(_, Tail, Text), append("peek(item(1))", _, Tail), !,
         conversation_message(C, 2, ok(M)), record_get(M, content, Whole), atom_length(Huge, N), length(Whole, N)
     )).
