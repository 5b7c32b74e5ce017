:- initialization(main, main).
:- consult(helper).
main :- helper(X), write(X), nl, catch(open('/etc/passwd', read, _), E, (print_error_(E))).
print_error_(error(E, _)) :- write(E), nl.
