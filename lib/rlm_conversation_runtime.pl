/** <module> rlmpl conversation runtime

The public Prolog surface of rlmpl: managed conversations, context packing,
token accounting, context handles and bounded recursive completions. Go
(host/) does the mechanism — storage, counting, solving, providers — through
foreign predicates; this file holds the policy and the facades.

Conventions (DESIGN.md §3, STYLE.md §6):

  - Public predicates are det and return one Outcome: ok(Value) or
    error(Reason). Failure only ever means "no".
  - error/1 (an outcome) and error/2 (an ISO exception) differ only in
    arity: a contract violation (wrong argument type, unknown option)
    throws error(Formal, Context); an expected outcome is returned.
  - Records stand in for upstream dicts: Tag([key(Value), ...]) with keys
    in sorted order.
  - Text is chars (double_quotes=chars); text arguments accept atoms,
    chars and codes.

Exports:
    rlm_version/1                % -Version
    rlm_ready/0
    conversation_context_pack/3  % +Conversation, +Options, -Outcome
    conversation_token_ledger/3  % +Conversation, +Options, -Outcome

Policy lives in lib/rlm_policy.pl, as data Go reads once per session:
the value model (context_utility/3), the boundary text, the encodings
counted at append and the option schemas; a program's context_pack_hook/2
adjusts one bounded candidate batch per pack.
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Runtime identity --- */

%!  rlm_version(-Version) is det.
%
%   Version is the runtime's version as an atom, e.g. '0.1.0'. It is the
%   same string `rlmpl version` prints.
rlm_version(Version) :-
    '$rlm_version'(Version).

%!  rlm_ready is semidet.
%
%   True when the runtime library is loaded and its foreign predicates are
%   installed; scripts can guard on it.
rlm_ready :-
    rlm_version(_).

/* --- Managed context --- */

%!  conversation_context_pack(+Conversation, +Options, -Outcome) is det.
%
%   Defined in Go (host/pred_pack.go over host/runtime). Compiles the
%   provider-visible context of Conversation under the hard
%   ceiling: fixed sections, then one exact optimization over the
%   mandatory hot tail, at most max_candidates older turns (read
%   newest-first, so the cost does not grow with the history), supplied
%   units and the cold-history boundary; tool calls and their results are
%   kept together. Options:
%
%     - policy(Overlay): see context_policy/2 (window(contiguous), the
%       default, keeps the hot tail plus the longest run of whole exchanges
%       before it that fits; window(most_turns) is upstream's model);
%     - token_options([model(M)]) or [encoding(E)]: the counter (default:
%       the conservative estimator, labelled estimated);
%     - visible_sections([section(Name, model|host, Text)]): charged and
%       rendered (model) or measured only (host);
%     - context_units(Units): extra units (warm summaries, explicit text);
%     - cold_history_boundary(Bool): default true.
%
%   Outcome is ok(conversation_context_pack([cold_history_boundary(St),
%   conversation_id(Id), ledger(L), policy(P), request(Messages),
%   selected(S), solver(Sv), utility(U)])): Messages is the exact request
%   counted by the ledger, whose total never exceeds the ceiling. Overflow
%   is an error naming what does not fit.

%!  conversation_token_ledger(+Conversation, +Options, -Outcome) is det.
%
%   The ledger of conversation_context_pack/3 with the same options:
%   ok(token_ledger([...])).
conversation_token_ledger(Conversation, Options, Outcome) :-
    conversation_context_pack(Conversation, Options, Packed),
    (   Packed = ok(conversation_context_pack(Props))
    ->  memberchk(ledger(Ledger), Props),
        Outcome = ok(Ledger)
    ;   Outcome = Packed
    ).
