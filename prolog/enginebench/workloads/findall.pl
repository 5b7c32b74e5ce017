% Collecting and rebuilding: findall/3 over a large range, length/2 and
% sorting.
collect(N) :- findall(X-Y, (between(1, N, X), Y is X mod 97), L), length(L, N), msort(L, S), length(S, N).

workload(findall_200k, collect(200000)).
