% The zebra puzzle: unification-heavy search with member/2 over
% partially instantiated houses.
right_of(A, B, [B, A|_]).
right_of(A, B, [_|T]) :- right_of(A, B, T).

next_to(A, B, L) :- right_of(A, B, L).
next_to(A, B, L) :- right_of(B, A, L).

mem(X, [X|_]).
mem(X, [_|T]) :- mem(X, T).

% h(Colour, Nation, Pet, Drink, Smoke)
houses([h(_,norwegian,_,_,_), _, h(_,_,_,milk,_), _, _]).

zebra(Owner) :-
    houses(Hs),
    mem(h(red,english,_,_,_), Hs),
    mem(h(_,spanish,dog,_,_), Hs),
    mem(h(green,_,_,coffee,_), Hs),
    mem(h(_,ukrainian,_,tea,_), Hs),
    right_of(h(green,_,_,_,_), h(ivory,_,_,_,_), Hs),
    mem(h(_,_,snails,_,winston), Hs),
    mem(h(yellow,_,_,_,kools), Hs),
    next_to(h(_,_,_,_,chesterfield), h(_,_,fox,_,_), Hs),
    next_to(h(_,_,_,_,kools), h(_,_,horse,_,_), Hs),
    mem(h(_,_,_,orange_juice,lucky), Hs),
    mem(h(_,japanese,_,_,parliament), Hs),
    next_to(h(_,norwegian,_,_,_), h(blue,_,_,_,_), Hs),
    mem(h(_,Owner,zebra,_,_), Hs).

zebra_times(0) :- !.
zebra_times(K) :- zebra(japanese), !, K1 is K - 1, zebra_times(K1).

workload(zebra, zebra_times(200)).
