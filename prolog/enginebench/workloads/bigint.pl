% Unbounded integers: factorials and powers past 64 bits.
fact(0, 1) :- !.
fact(N, F) :- N1 is N - 1, fact(N1, F1), F is N * F1.

big_times(0) :- !.
big_times(K) :- fact(300, _), K1 is K - 1, big_times(K1).

workload(bigint_2_100, (X is 2^100, X =:= 1267650600228229401496703205376)).
workload(factorial_300, big_times(200)).
