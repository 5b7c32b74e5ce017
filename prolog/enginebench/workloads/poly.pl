% (1 + x + y + z) ^ 10 in a recursive dense representation: a polynomial
% is an integer or p(Var, [C0, C1, ...]) with coefficients in later
% variables (x < y < z).
add(P, Q, R) :- integer(P), integer(Q), !, R is P + Q.
add(P, p(V, Cs), p(V, Rs)) :- integer(P), !, add_const(Cs, P, Rs).
add(p(V, Cs), Q, p(V, Rs)) :- integer(Q), !, add_const(Cs, Q, Rs).
add(p(V, Cs), p(W, Ds), R) :- V == W, !, add_list(Cs, Ds, Rs), R = p(V, Rs).
add(p(V, Cs), p(W, Ds), R) :- V @< W, !, add_const_poly(Cs, p(W, Ds), Rs), R = p(V, Rs).
add(P, p(V, Ds), p(V, Rs)) :- add_const_poly(Ds, P, Rs).

add_const([C|Cs], K, [R|Cs]) :- add(C, K, R).
add_const_poly([C|Cs], P, [R|Cs]) :- add(C, P, R).

add_list([], Ds, Ds) :- !.
add_list(Cs, [], Cs) :- !.
add_list([C|Cs], [D|Ds], [R|Rs]) :- add(C, D, R), add_list(Cs, Ds, Rs).

mul(P, Q, R) :- integer(P), integer(Q), !, R is P * Q.
mul(P, p(V, Cs), p(V, Rs)) :- integer(P), !, scale(Cs, P, Rs).
mul(p(V, Cs), Q, p(V, Rs)) :- integer(Q), !, scale(Cs, Q, Rs).
mul(p(V, Cs), p(W, Ds), p(V, Rs)) :- V == W, !, mul_list(Cs, Ds, Rs).
mul(p(V, Cs), p(W, Ds), p(V, Rs)) :- V @< W, !, scale(Cs, p(W, Ds), Rs).
mul(P, p(V, Ds), p(V, Rs)) :- scale(Ds, P, Rs).

scale([], _, []).
scale([C|Cs], K, [R|Rs]) :- mul(C, K, R), scale(Cs, K, Rs).

mul_list([], _, []).
mul_list([C|Cs], Ds, Rs) :-
    scale(Ds, C, Ps),
    mul_list(Cs, Ds, Qs),
    add_list(Ps, [0|Qs], Rs).

power(0, _, 1) :- !.
power(N, P, R) :- N1 is N - 1, power(N1, P, R1), mul(P, R1, R).

base(p(x, [p(y, [p(z, [1, 1]), 1]), 1])).

poly_times(0) :- !.
poly_times(K) :- base(P), power(10, P, _), K1 is K - 1, poly_times(K1).

workload(poly_10, poly_times(20)).
