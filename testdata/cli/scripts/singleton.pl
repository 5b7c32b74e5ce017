% Two clauses with variables that occur once.
p(X, Y) :- q(Z).

r(_A, B, B).
s(X) :-
    t(_).
q(_).
t(_).
