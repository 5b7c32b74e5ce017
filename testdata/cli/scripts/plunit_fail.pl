:- begin_tests(arith).
test(sum, [true(X == 4)]) :- X is 2 + 2.
test(wrong, [true(X == 5)]) :- X is 2 + 2.
test(skipped, [blocked(not_yet)]) :- fail.
:- end_tests(arith).
:- initialization(run_tests, main).
