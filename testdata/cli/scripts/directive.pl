:- write(loading), nl.
:- initialization(write(init_goal)).
