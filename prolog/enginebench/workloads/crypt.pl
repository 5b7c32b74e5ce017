% SEND + MORE = MONEY, column by column with carries: selection, arithmetic
% and early pruning.
sel(X, [X|T], T).
sel(X, [H|T], [H|R]) :- sel(X, T, R).

column(A, B, CarryIn, Sum, CarryOut) :-
    T is A + B + CarryIn,
    Sum is T mod 10,
    CarryOut is T // 10.

send_more_money([S,E,N,D,M,O,R,Y]) :-
    Ds0 = [0,1,2,3,4,5,6,7,8,9],
    sel(D, Ds0, Ds1), sel(E, Ds1, Ds2),
    column(D, E, 0, Y, C1), sel(Y, Ds2, Ds3),
    sel(N, Ds3, Ds4), sel(R, Ds4, Ds5),
    column(N, R, C1, E, C2),
    sel(O, Ds5, Ds6),
    column(E, O, C2, N, C3),
    sel(S, Ds6, Ds7), S =\= 0, sel(M, Ds7, _), M =\= 0,
    column(S, M, C3, O, M).

crypt_times(0) :- !.
crypt_times(K) :-
    findall(L, send_more_money(L), [[9,5,6,7,1,0,8,2]]),
    K1 is K - 1,
    crypt_times(K1).

workload(crypt, crypt_times(30)).
