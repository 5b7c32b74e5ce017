% Suite pinning ichiban behaviour lib/ relies on or works around, so that an
% upstream change is noticed (DESIGN.md "Living with ichiban").
:- set_prolog_flag(double_quotes, chars).

nat_(0).
nat_(N) :- nat_(M), N is M + 1.

% A cut in the then-branch of an if-then-else cuts the clause (ISO, SWI):
% upstream ichiban v1.2.2 made it local and gave [1,2,3,4].
cut_in_ite_(X) :- member(X, [1,2,3,4]), ( X >= 2 -> ! ; true ).
test(cut_in_then_branch_cuts_the_clause, (findall(X, cut_in_ite_(X), L), L == [1,2])).

test(double_quotes_are_chars, ("ab" == [a,b])).
test(quoted_atom_with_dash_reads, (atom_length('a – b', N), N == 5)).
test(integers_are_unbounded,
     (X is 9223372036854775807 + 1, integer(X), X =:= 2^63, X - 1 =:= 9223372036854775807)).

% NB: ichiban keeps no source of static predicates and clause/2 refuses
% them, so listing/1 shows static predicates from the texts the host
% consulted (prolog/listing.go). If this fails, clause/2 could serve.
engine_static_(1).
test(clause_of_static_predicate_is_private,
     [throws(error(permission_error(access, private_procedure, engine_static_/1), _))],
     clause(engine_static_(_), _)).
