/** <module> Context budget: policy, sections and the generic packer

The budget of a provider request and the exact packer that fills it.
A policy is a record

    context_policy([effective_context_tokens(E), max_candidates(C),
                    max_context_tokens(M), min_recent_turns(R), overflow(deny),
                    provider_context_tokens(P), reserve_output_tokens(O),
                    safety_margin_tokens(S), window(W)])

with E = min(M, P): a 300k operator cap stays 300k on a 1M-token model.
Overflow is always deny: nothing is ever sent over the ceiling. The keys,
their types and defaults are rlm_option(context_policy/2, ...) facts
(lib/rlm_policy.pl), the one source of the defaults. context_policy/2 and
context_pack/4 are defined in Go (host/pred_pack.go).

Exports:
    default_context_policy/1     % -Policy
    context_policy/2             % +Overlay, -Outcome
    context_section/5            % +Name, +Visibility, +Text, +TokenOptions, -Outcome
    context_pack/4               % +Units, +Sections, +Policy, -Outcome
*/
:- set_prolog_flag(double_quotes, chars).

/* --- Public API --- */

%!  default_context_policy(-Policy) is det.
%
%   The default budget: 131072-token operator cap and provider window,
%   16384 reserved for output, 4096 safety margin, the last 12 messages
%   mandatory, at most 512 older candidates, the contiguous window,
%   overflow denied.
default_context_policy(Policy) :-
    context_policy([], ok(Policy)).

%!  context_policy(+Overlay, -Outcome) is det.
%
%   Overlays Overlay — an option list such as [max_context_tokens(300000)]
%   or a context_policy record — on the defaults and validates it:
%   ok(Policy). A value of the wrong type throws (type_error(nonneg, -1));
%   an unknown key throws domain_error(context_policy_option, Opt); a value
%   out of range is error(context_budget_error([field(F),
%   kind(validation_error), message(M), phase(policy)])) naming the field.

%!  context_section(+Name, +Visibility, +Text, +TokenOptions, -Outcome) is det.
%
%   A fixed section (system prompt, instructions, host metadata) counted
%   with token_count_text/3 under TokenOptions. Visibility model is charged
%   to the window; host is measured and charged 0. Outcome is
%   ok(context_section([name(N), text(T), token_count(C), tokens(K), visibility(V)])).
context_section(Name, Visibility, Text, TokenOptions, Outcome) :-
    must_be(atom, Name),
    must_be(oneof([model, host]), Visibility),
    token_count_text(Text, TokenOptions, Counted),
    (   Counted = ok(Count)
    ->  Count = token_count(CountProps),
        memberchk(tokens(Tokens), CountProps),
        Outcome = ok(context_section([name(Name), text(Text), token_count(Count),
                                      tokens(Tokens), visibility(Visibility)]))
    ;   Outcome = Counted
    ).

%!  context_pack(+Units, +Sections, +Policy, -Outcome) is det.
%
%   Chooses exactly one variant, or omission for optional units, of every
%   context_unit([id(I), section(S), mandatory(B), variants(Vs)]) to
%   maximize total utility with every token under the policy's ceiling
%   (fixed sections, output reserve and safety margin charged first).
%   Variants are context_variant([kind(K), tokens(T), utility(U), value(V)]);
%   a unit may add requires(Ids) and excludes(Ids). The optimum is exact
%   (gini-backed solver), ties go to newer units then fewer tokens.
%   Outcome is ok(context_pack([ledger(L), policy(P), selected(S),
%   solver(St), utility(U)])) or an error naming what does not fit:
%   fixed_context_exceeds_limit (base(B) = fixed sections +
%   reserve_output_tokens(R) + safety_margin_tokens(M) > limit(L): a small
%   max_context_tokens wants a smaller reserve and margin too),
%   mandatory_context_exceeds_limit (with the units and the excess) or
%   no_feasible_context_pack. St is
%   solver([bound(B), core(N), elapsed_ms(Ms), limit(L), phase(P),
%   status(optimal|feasible), work(W)]): W is the solver's deterministic
%   effort, the same on any machine, and L the limit that stopped a search
%   short of a proof (none otherwise; only time, a safety net, depends on
%   the machine). Every pack is checked against the constraints by gini
%   before it is returned.
