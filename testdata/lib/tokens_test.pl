% Suite for lib/rlm_tokens.pl.
:- set_prolog_flag(double_quotes, chars).

count_(Text, Opts, Field, V) :-
    token_count_text(Text, Opts, ok(token_count(Props))),
    P =.. [Field, V],
    memberchk(P, Props).

char_counter_(Text, N) :- atom_length(Text, N).

test(exact_with_model, [det],
     (   count_("hello world", [model('gpt-4o')], tokens, 2),
         count_("hello world", [model('gpt-4o')], method, exact),
         count_("hello world", [model('gpt-4o')], encoding, o200k_base)
     )).
test(exact_with_encoding,
     (   count_('hello world', [encoding(cl100k_base)], tokens, 2),
         count_('hello world', [encoding(cl100k_base)], basis, bpe)
     )).
test(codes_chars_and_atoms_count_alike,
     (   atom_codes('naïve café', Codes),
         count_(Codes, [model('gpt-4o')], tokens, N),
         count_('naïve café', [model('gpt-4o')], tokens, N),
         count_("naïve café", [model('gpt-4o')], tokens, N)
     )).
test(default_is_an_honest_estimate,
     (   count_("hello world", [], method, estimated),
         count_("hello world", [], safety_percent, 10)
     )).
test(unknown_model_is_an_explicit_estimate,
     (   count_("hello", [model('no-such-model')], method, estimated),
         count_("hello", [model('no-such-model')], model_known, false)
     )).
test(unknown_encoding_is_an_error,
     (   token_count_text("hello", [encoding(nope)], error(token_error(P))),
         memberchk(kind(unknown_encoding), P)
     )).
test(caller_counter_is_never_exact,
     (   count_(abcdef, [token_counter(char_counter_)], tokens, 6),
         count_(abcdef, [token_counter(char_counter_)], method, caller_supplied),
         count_(abcdef, [token_counter(char_counter_)], basis, registered_counter)
     )).
test(unknown_option_throws,
     [throws(error(domain_error(token_count_text_option, colour(red)), _))],
     token_count_text("x", [colour(red)], _)).
test(non_list_options_throw,
     [throws(error(type_error(list, nope), _))],
     token_count_text("x", nope, _)).
test(bad_text_is_a_type_error,
     [throws(error(type_error(text, f(x)), _))],
     token_count_text(f(x), [model('gpt-4o')], _)).
test(model_encoding_table,
     (   token_model_encoding('gpt-4o-2024-08-06', ok(o200k_base)),
         token_model_encoding('gpt-4', ok(cl100k_base)),
         token_model_encoding('ft:gpt-4o-mini:acme::x1', ok(o200k_base)),
         token_model_encoding('no-such-model', error(token_error(P))),
         memberchk(kind(unknown_model), P)
     )).
