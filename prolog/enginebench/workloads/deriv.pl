% Symbolic differentiation: structure building and first-argument
% dispatch on functors.
d(U + V, X, DU + DV) :- !, d(U, X, DU), d(V, X, DV).
d(U - V, X, DU - DV) :- !, d(U, X, DU), d(V, X, DV).
d(U * V, X, DU * V + U * DV) :- !, d(U, X, DU), d(V, X, DV).
d(U / V, X, (DU * V - U * DV) / (^(V, 2))) :- !, d(U, X, DU), d(V, X, DV).
d(^(U, N), X, DU * N * ^(U, N1)) :- !, integer(N), N1 is N - 1, d(U, X, DU).
d(-U, X, -DU) :- !, d(U, X, DU).
d(exp(U), X, exp(U) * DU) :- !, d(U, X, DU).
d(log(U), X, DU / U) :- !, d(U, X, DU).
d(X, X, 1) :- !.
d(_, _, 0).

expr(1, log(log(log(log(log(log(log(log(log(log(x))))))))))).
expr(2, x * x * x * x * x * x * x * x * x * x).
expr(3, x / x / x / x / x / x / x / x / x / x).
expr(4, (x + 1) * (^(x, 2) + 2) * (^(x, 3) + 3)).

deriv_all :- expr(_, E), d(E, x, _), fail.
deriv_all.

deriv_times(0) :- !.
deriv_times(K) :- deriv_all, K1 is K - 1, deriv_times(K1).

workload(deriv, deriv_times(20000)).
