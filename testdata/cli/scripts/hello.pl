% Prints its arguments and a greeting.
:- initialization(main, main).

main :-
    current_prolog_flag(argv, [_|Args]),
    write(args(Args)), nl,
    atom_length('naïve – café', N),
    write(len(N)), nl.
