% A deterministic counting loop: last-call optimisation and first-argument
% indexing keep it in constant memory and leave no choice point.
count(0) :- !.
count(N) :- N1 is N - 1, count(N1).

workload(loop_1m, count(1000000)).
workload(loop_3m, count(3000000)).
