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
