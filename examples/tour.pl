% A tour of the rlmpl runtime: `make run` runs this file.
%
% It grows with the runtime; today it shows the host itself: the library
% loads, SWI-style helpers work, text is chars, errors are ISO terms.
:- initialization(main, main).

main :-
    rlm_version(V),
    write('rlmpl runtime '), write(V), nl,
    (   rlm_ready
    ->  write('library loaded'), nl
    ;   write('library missing'), nl
    ),
    Text = "naïve – café",
    atom_chars(A, Text),
    atom_length(A, N),
    write(text(A, N)), nl,
    catch(atom_length(_, _), error(E, _), (write(caught(E)), nl)),
    current_prolog_flag(argv, Argv),
    write(argv(Argv)), nl.
