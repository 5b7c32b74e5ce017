ok(1).
broken(X :- .
