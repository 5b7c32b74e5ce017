:- initialization(main, main).
main :- atom_length(X, X).
