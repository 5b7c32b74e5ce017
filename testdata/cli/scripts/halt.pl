:- initialization(main, main).
main :- write(before), nl, catch(halt(7), _, true), write(after), nl.
