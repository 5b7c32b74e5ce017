/** <module> Token accounting

Exact token counts where the model's tokenizer is known, honest estimates
elsewhere. A count is

    token_count([basis(B), encoding(E), method(M), safety_percent(P), tokens(N)])

with method exact only when the text was tokenized with the model's own
encoding; estimated counts carry the estimator's safety margin (10%). A
count from a caller's token_counter(C) is method(caller_supplied),
basis(registered_counter): the host cannot vouch for a counter it does not
own, and never labels one exact. The predicates are defined in Go
(host/pred_token.go).

Exports:
    token_count_text/3           % +Text, +Options, -Outcome
    token_model_encoding/2       % +Model, -Outcome
    token_register_encoding/4    % +Name, +RanksFile, +Options, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API (defined in Go) --- */

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

%!  token_model_encoding(+Model, -Outcome) is det.
%
%   Outcome is ok(Encoding) for a model rlmpl's table knows (exact names,
%   dated snapshots, ft: fine-tunes, provider prefixes such as openai/),
%   else error(token_error([kind(unknown_model), ...])).

%!  token_register_encoding(+Name, +RanksFile, +Options, -Outcome) is det.
%
%   Registers encoding Name from a tiktoken-format ranks file (one
%   "base64-token rank" pair per line, as in a Llama 3 tokenizer.model)
%   read from the program's directory. Options: pattern(P) with P one of
%   cl100k (default), o200k, r50k; specials(["<|begin_of_text|>"-128000,
%   ...]); chat_format(F) with F none (default: requests counted with the
%   encoding are framed by the OpenAI cookbook's rule, estimated) or llama3
%   (Llama 3's template as llama.cpp renders it, verified against its
%   usage.prompt_tokens: requests count exactly). Outcome is
%   ok(registered(Name)). No vocabulary is downloaded or
%   shipped beyond the built-in ones.
