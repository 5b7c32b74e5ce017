:- initialization(main, main).
main :- fail.
