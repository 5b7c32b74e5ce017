/** <module> Token accounting

Exact token counts where the model's tokenizer is known, honest estimates
elsewhere. A count is

    token_count([basis(B), encoding(E), method(M), safety_percent(P), tokens(N)])

with method exact only when the text was tokenized with the model's own
encoding; estimated counts carry the estimator's safety margin (10%). A
count from a caller's token_counter(C) is method(caller_supplied),
basis(registered_counter): the host cannot vouch for a counter it does not
own, and never labels one exact.

Exports:
    token_count_text/3           % +Text, +Options, -Outcome
    token_model_encoding/2       % +Model, -Outcome
    token_register_encoding/4    % +Name, +RanksFile, +Options, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API --- */

%!  token_count_text(+Text, +Options, -Outcome) is det.
%
%   Counts Text (atom, chars or codes). Options:
%
%     - model(M): count with M's tokenizer (an unknown model is counted by
%       the estimator and the count says model_known(false));
%     - encoding(E): count with encoding E (cl100k_base, o200k_base,
%       p50k_base, r50k_base, o200k_harmony, or one registered with
%       token_register_encoding/4); unknown is
%       error(token_error([kind(unknown_encoding), ...]));
%     - token_counter(C): call(C, Text, N) supplies the count.
%
%   With none of them, the conservative estimator counts.
%
%   ?- token_count_text("hello world", [model('gpt-4o')], ok(C)).
%   C = token_count([basis(bpe),encoding(o200k_base),method(exact),safety_percent(0),tokens(2)]).
token_count_text(Text, Options, Outcome) :-
    token_options_(Options),
    (   option(token_counter(Counter), Options)
    ->  token_count_caller_(Counter, Text, Outcome)
    ;   option(model(Model), Options, none),
        option(encoding(Encoding), Options, none),
        token_count_(Text, Model, Encoding, Outcome)
    ).

%!  token_model_encoding(+Model, -Outcome) is det.
%
%   Outcome is ok(Encoding) for a model rlmpl's table knows (exact names,
%   dated snapshots, ft: fine-tunes, provider prefixes such as openai/),
%   else error(token_error([kind(unknown_model), ...])).
token_model_encoding(Model, Outcome) :-
    must_be(atom, Model),
    token_model_encoding_(Model, Outcome).

%!  token_register_encoding(+Name, +RanksFile, +Options, -Outcome) is det.
%
%   Registers encoding Name from a tiktoken-format ranks file (one
%   "base64-token rank" pair per line, as in a Llama 3 tokenizer.model)
%   read from the program's directory. Options: pattern(P) with P one of
%   cl100k (default), o200k, r50k; specials(["<|begin_of_text|>"-128000,
%   ...]). Outcome is ok(registered(Name)). No vocabulary is downloaded or
%   shipped beyond the built-in ones.
token_register_encoding(Name, File, Options, Outcome) :-
    must_be(atom, Name),
    must_be(atom, File),
    must_be(list, Options),
    option(pattern(Pattern), Options, cl100k),
    option(specials(Specials), Options, []),
    token_register_encoding_(Name, File, Pattern, Specials, Outcome).

/* --- Options --- */

token_option_(model, atom).
token_option_(encoding, atom).
token_option_(token_counter, callable).

token_options_(Options) :-
    must_be(list, Options),
    forall(member(O, Options), token_option_check_(O)).

token_option_check_(O) :-
    (   compound(O),
        O =.. [Name, Value],
        token_option_(Name, Type)
    ->  must_be(Type, Value)
    ;   throw(error(domain_error(token_option, O), token_count_text/3))
    ).

/* --- Helpers --- */

token_count_caller_(Counter, Text, Outcome) :-
    call(Counter, Text, N),
    must_be(nonneg, N),
    Outcome = ok(token_count([basis(registered_counter), encoding(none),
                              method(caller_supplied), safety_percent(0), tokens(N)])).
