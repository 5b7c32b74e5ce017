% Naive reverse of a 30-element list: 496 logical inferences per reverse,
% the classic measure of LIPS.
app([], L, L).
app([H|T], L, [H|R]) :- app(T, L, R).

nrev([], []).
nrev([H|T], R) :- nrev(T, RT), app(RT, [H], R).

range(N, N, [N]) :- !.
range(I, N, [I|T]) :- I < N, I1 is I + 1, range(I1, N, T).

nrev_times(0, _) :- !.
nrev_times(K, L) :- nrev(L, _), K1 is K - 1, nrev_times(K1, L).

nrev30(K) :- range(1, 30, L), nrev_times(K, L).

workload(nrev30, nrev30(3000)).
