% Lookups by the first argument among asserted facts: with first-argument
% indexing a lookup costs the same among 100 facts as among 100,000.
:- dynamic(fact/2).

fill(N) :- between(1, N, K), V is K * 7, assertz(fact(K, V)), fail.
fill(_).

% lookups(N, M): M lookups of keys cycling through 1..N.
lookups(N, M) :- between(1, M, I), K is I mod N + 1, fact(K, _), fail.
lookups(_, _).

setup(lookup_20k, fill(20000)).
setup(lookup_100x100k, fill(100)).
setup(lookup_100kx100k, fill(100000)).

workload(lookup_20k, lookups(20000, 20000)).
workload(lookup_100x100k, lookups(100, 100000)).
workload(lookup_100kx100k, lookups(100000, 100000)).
