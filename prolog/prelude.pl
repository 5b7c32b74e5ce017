/** <module> Compatibility prelude

SWI-Prolog predicates that ichiban lacks, with SWI semantics. This file is
the Prolog half. The Go half (format/1,2,3, with_output_to/2, msort/2,
sort/4, must_be/2, option/2,3, select_option/3,4, atomic_list_concat/2,3,
term_to_atom/2, nb_setval/2, record_get/3, ...) is documented in the
files prelude.go and format.go.

Choices are made by clause heads and clause-level cuts where that reads
well, and lists are walked by first-argument recursion, which the engine
indexes (a call on a bound first argument leaves no choice point where no
other clause can match).

Exports:
    forall/2                     % :Cond, :Action
    ignore/1                     % :Goal
    predsort/3                   % :Pred, +List, -Sorted
    last/2                       % ?List, ?Last
    reverse/2                    % ?List, ?Reversed
    append/2                     % +ListOfLists, ?List
    include/3                    % :Pred, +List, -Included
    exclude/3                    % :Pred, +List, -Excluded
    partition/4                  % :Pred, +List, -Included, -Excluded
    partition/5                  % :Pred, +List, -Less, -Equal, -Greater
    foldl/4                      % :Goal, ?List, +V0, -V
    foldl/5                      % :Goal, ?List1, ?List2, +V0, -V
    foldl/6                      % :Goal, ?List1, ?List2, ?List3, +V0, -V
    aggregate_all/3              % +Spec, :Goal, -Result
    findall/4                    % +Template, :Goal, -Bag, ?Tail
    pairs_keys_values/3          % ?Pairs, ?Keys, ?Values
    pairs_keys/2                 % ?Pairs, ?Keys
    pairs_values/2               % ?Pairs, ?Values
    selectchk/3                  % ?Elem, ?List, ?Rest
    nextto/3                     % ?X, ?Y, ?List
    flatten/2                    % +NestedList, -FlatList
    permutation/2                % ?Xs, ?Ys
    string_concat/3              % ?S1, ?S2, ?S3
    char_type/2                  % ?Char, ?Type
    code_type/2                  % ?Code, ?Type
    (>>)/2..9                    % +Params, :Lambda, ?A1, ...
    print/1                      % @Term
    print/2                      % +Stream, @Term
    writeln/1                    % @Term
    writeln/2                    % +Stream, @Term
    setup_call_cleanup/3         % :Setup, :Goal, :Cleanup
    call_cleanup/2               % :Goal, :Cleanup
    assert/1                     % +Clause
    nb_current/2                 % ?Key, ?Value
    nth0/4                       % ?N, ?List, ?Elem, ?Rest
    nth1/4                       % ?N, ?List, ?Elem, ?Rest
    select/4                     % ?X, ?Xs, ?Y, ?Ys
    transpose_pairs/2            % +Pairs, -Transposed
    map_list_to_pairs/3          % :Function, +List, -Pairs
    group_pairs_by_key/2         % +Pairs, -Joined
    list_to_ord_set/2            % +List, -OrdSet
    ord_union/3                  % +Set1, +Set2, -Union
    ord_subtract/3               % +Set, +Delete, -Remaining
    ord_memberchk/2              % +Elem, +OrdSet
    text_concat/3                % ?T1, ?T2, ?T3
    string_code/3                % ?Index, +String, ?Code
    empty_assoc/1                % ?Assoc
    assoc_to_list/2              % +Assoc, -Pairs
    assoc_to_keys/2              % +Assoc, -Keys
    assoc_to_values/2            % +Assoc, -Values
    max_assoc/3                  % +Assoc, -Key, -Value
    min_assoc/3                  % +Assoc, -Key, -Value
    map_assoc/2                  % :Pred, +Assoc
    map_assoc/3                  % :Pred, +Assoc0, -Assoc
*/

% SWI's variant operators (swi.go defines the predicates).
:- op(700, xfx, =@=).
:- op(700, xfx, \=@=).

/* --- Control --- */

%!  forall(:Cond, :Action) is semidet.
%
%   True when Action succeeds for every solution of Cond. Bindings are
%   not kept.
forall(Cond, Action) :-
    \+ ( call(Cond), \+ call(Action) ).

%!  ignore(:Goal) is det.
%
%   Calls Goal once and succeeds even when it fails.
ignore(Goal) :-
    call(Goal),
    !.
ignore(_).

/* --- Sorting --- */

%!  predsort(:Pred, +List, -Sorted) is det.
%
%   Sorts List with call(Pred, Order, A, B), where Order is <, > or =.
%   Elements that compare = are dropped, keeping the first.
%
%   ?- predsort([O,A,B]>>compare(O,A,B), [c,a,b,a], L).
%   L = [a,b,c].
predsort(Pred, List, Sorted) :-
    length(List, N),
    predsort_(Pred, N, List, _, Sorted1),
    !,
    Sorted = Sorted1.

% predsort_(+Pred, +N, +List0, -List, -Sorted): sort the first N of List0.
predsort_(Pred, 2, [X1,X2|L], L, R) :-
    !,
    call(Pred, Delta, X1, X2),
    predsort_pair_(Delta, X1, X2, R).
predsort_(_, 1, [X|L], L, [X]) :-
    !.
predsort_(_, 0, L, L, []) :-
    !.
predsort_(Pred, N, L1, L3, R) :-
    N1 is N // 2,
    N2 is N - N1,
    predsort_(Pred, N1, L1, L2, R1),
    predsort_(Pred, N2, L2, L3, R2),
    predmerge_(Pred, R1, R2, R).

% predsort_pair_(+Order, +X1, +X2, -Sorted)
predsort_pair_(<, X1, X2, [X1,X2]).
predsort_pair_(=, X1, _, [X1]).
predsort_pair_(>, X1, X2, [X2,X1]).

% predmerge_(+Pred, +Sorted1, +Sorted2, -Sorted)
predmerge_(_, [], R, R) :-
    !.
predmerge_(_, R, [], R) :-
    !.
predmerge_(Pred, [H1|T1], [H2|T2], Result) :-
    call(Pred, Delta, H1, H2),
    !,
    predmerge_order_(Delta, Pred, H1, H2, T1, T2, Result).

% predmerge_order_(+Order, +Pred, +H1, +H2, +T1, +T2, -Merged)
predmerge_order_(<, Pred, H1, H2, T1, T2, [H1|R]) :-
    predmerge_(Pred, T1, [H2|T2], R).
predmerge_order_(=, Pred, H1, _, T1, T2, [H1|R]) :-
    predmerge_(Pred, T1, T2, R).
predmerge_order_(>, Pred, H1, H2, T1, T2, [H2|R]) :-
    predmerge_(Pred, [H1|T1], T2, R).

/* --- Lists --- */

%!  last(?List, ?Last) is semidet.
%
%   Last is the last element of List.
last(List, Last) :-
    is_list(List),
    !,
    last_list_(List, Last).
last([X|Xs], Last) :-
    last_(Xs, X, Last).

% last_(+List, +Prev, -Last)
last_([], Last, Last).
last_([X|Xs], _, Last) :-
    last_(Xs, X, Last).

%!  reverse(?List, ?Reversed) is semidet.
%
%   Reversed has the elements of List in reverse order. Terminates when
%   either argument is a proper list.
reverse(Xs, Ys) :-
    reverse_(Xs, [], Ys, Ys).

% reverse_(?List, +Acc, ?Reversed, ?Bound): Bound stops runaway search.
reverse_([], Ys, Ys, []).
reverse_([X|Xs], Rs, Ys, [_|Bound]) :-
    reverse_(Xs, [X|Rs], Ys, Bound).

%!  append(+ListOfLists, ?List) is semidet.
%
%   List is the concatenation of the lists in ListOfLists.
%
%   @error instantiation_error if ListOfLists is a partial list.
append(ListOfLists, List) :-
    must_be(list, ListOfLists),
    append_(ListOfLists, List).

% append_(+ListOfLists, ?List)
append_([], []).
append_([L|Ls], As) :-
    append(L, Ws, As),
    append_(Ls, Ws).

%!  include(:Pred, +List, -Included) is det.
%
%   Included are the elements of List for which call(Pred, X) succeeds.
include(Pred, List, Included) :-
    include_(List, Pred, Included).

% include_(+List, +Pred, -Included)
include_([], _, []).
include_([X|Xs], Pred, Included) :-
    include_one_(Pred, X, Included, Included1),
    include_(Xs, Pred, Included1).

% include_one_(+Pred, +X, -List, ?Tail)
include_one_(Pred, X, Included, Tail) :-
    call(Pred, X),
    !,
    Included = [X|Tail].
include_one_(_, _, Tail, Tail).

%!  exclude(:Pred, +List, -Excluded) is det.
%
%   Excluded are the elements of List for which call(Pred, X) fails.
exclude(Pred, List, Excluded) :-
    exclude_(List, Pred, Excluded).

% exclude_(+List, +Pred, -Excluded)
exclude_([], _, []).
exclude_([X|Xs], Pred, Excluded) :-
    exclude_one_(Pred, X, Excluded, Excluded1),
    exclude_(Xs, Pred, Excluded1).

% exclude_one_(+Pred, +X, -List, ?Tail)
exclude_one_(Pred, X, Excluded, Tail) :-
    call(Pred, X),
    !,
    Excluded = Tail.
exclude_one_(_, X, [X|Tail], Tail).

%!  partition(:Pred, +List, -Included, -Excluded) is det.
%
%   Included are the elements for which call(Pred, X) succeeds, Excluded
%   the others, both in order.
partition(Pred, List, Included, Excluded) :-
    partition_(List, Pred, Included, Excluded).

% partition_(+List, +Pred, -Included, -Excluded)
partition_([], _, [], []).
partition_([X|Xs], Pred, Included, Excluded) :-
    partition_one_(Pred, X, Included, Included1, Excluded, Excluded1),
    partition_(Xs, Pred, Included1, Excluded1).

% partition_one_(+Pred, +X, -Incl, ?InclTail, -Excl, ?ExclTail)
partition_one_(Pred, X, Incl, I, Excl, E) :-
    call(Pred, X),
    !,
    Incl = [X|I],
    Excl = E.
partition_one_(_, X, I, I, [X|E], E).

%!  partition(:Pred, +List, -Less, -Equal, -Greater) is semidet.
%
%   Splits List by call(Pred, X, Order), where Order is <, = or >.
%
%   @error must_be(oneof([<,=,>]), Order) for another Order.
partition(Pred, List, Less, Equal, Greater) :-
    partition_(List, Pred, Less, Equal, Greater).

% partition_(+List, +Pred, -Less, -Equal, -Greater)
partition_([], _, [], [], []).
partition_([H|T], Pred, L, E, G) :-
    call(Pred, H, Diff),
    partition_order_(Diff, H, Pred, T, L, E, G).

% partition_order_(+Order, +H, +Pred, +T, -Less, -Equal, -Greater)
partition_order_(<, H, Pred, T, L, E, G) :-
    !,
    L = [H|Rest],
    partition_(T, Pred, Rest, E, G).
partition_order_(=, H, Pred, T, L, E, G) :-
    !,
    E = [H|Rest],
    partition_(T, Pred, L, Rest, G).
partition_order_(>, H, Pred, T, L, E, G) :-
    !,
    G = [H|Rest],
    partition_(T, Pred, L, E, Rest).
partition_order_(Diff, _, _, _, _, _, _) :-
    must_be(oneof([<,=,>]), Diff).

%!  foldl(:Goal, ?List, +V0, -V) is nondet.
%
%   Folds List from the left: call(Goal, X, V0, V1) for each X.
%
%   ?- foldl([X,A0,A]>>(A is A0+X), [1,2,3], 0, S).
%   S = 6.
foldl(Goal, List, V0, V) :-
    foldl_(List, Goal, V0, V).

% foldl_(?List, +Goal, +V0, -V)
foldl_([], _, V, V).
foldl_([X|Xs], Goal, V0, V) :-
    call(Goal, X, V0, V1),
    foldl_(Xs, Goal, V1, V).

%!  foldl(:Goal, ?List1, ?List2, +V0, -V) is nondet.
%
%   foldl/4 over two lists of equal length.
foldl(Goal, List1, List2, V0, V) :-
    foldl_(List1, List2, Goal, V0, V).

% foldl_(?List1, ?List2, +Goal, +V0, -V)
foldl_([], [], _, V, V).
foldl_([X|Xs], [Y|Ys], Goal, V0, V) :-
    call(Goal, X, Y, V0, V1),
    foldl_(Xs, Ys, Goal, V1, V).

%!  foldl(:Goal, ?List1, ?List2, ?List3, +V0, -V) is nondet.
%
%   foldl/4 over three lists of equal length.
foldl(Goal, List1, List2, List3, V0, V) :-
    foldl_(List1, List2, List3, Goal, V0, V).

% foldl_(?List1, ?List2, ?List3, +Goal, +V0, -V)
foldl_([], [], [], _, V, V).
foldl_([X|Xs], [Y|Ys], [Z|Zs], Goal, V0, V) :-
    call(Goal, X, Y, Z, V0, V1),
    foldl_(Xs, Ys, Zs, Goal, V1, V).

/* --- Solutions (library(aggregate), findall/4) --- */

%!  aggregate_all(+Spec, :Goal, -Result) is semidet.
%
%   Aggregates the solutions of Goal. Spec is count, sum(Expr),
%   max(Expr), min(Expr), max(Expr, Witness), min(Expr, Witness),
%   bag(Template) or set(Template). max and min fail when Goal has no
%   solutions; count and sum give 0.
%
%   ?- aggregate_all(max(L-W), (member(W, [ab, c]), atom_length(W, L)), M).
%   M = 2-ab.
%
%   @error domain_error(aggregate_template, Spec) for another Spec.
aggregate_all(Spec, _, _) :-
    var(Spec),
    !,
    throw(error(instantiation_error, aggregate_all/3)).
aggregate_all(count, Goal, Count) :-
    !,
    findall(x, Goal, Xs),
    length(Xs, Count).
aggregate_all(sum(X), Goal, Sum) :-
    !,
    findall(X, Goal, Xs),
    sum_list(Xs, Sum).
aggregate_all(max(X), Goal, Max) :-
    !,
    findall(X, Goal, Xs),
    max_list(Xs, Max).
aggregate_all(min(X), Goal, Min) :-
    !,
    findall(X, Goal, Xs),
    min_list(Xs, Min).
aggregate_all(max(X, W), Goal, max(Max, Witness)) :-
    !,
    findall(X-W, Goal, [X0-W0|Pairs]),
    must_be(number, X0),
    aggregate_best_(Pairs, >, X0, W0, Max, Witness).
aggregate_all(min(X, W), Goal, min(Min, Witness)) :-
    !,
    findall(X-W, Goal, [X0-W0|Pairs]),
    must_be(number, X0),
    aggregate_best_(Pairs, <, X0, W0, Min, Witness).
aggregate_all(bag(X), Goal, Bag) :-
    !,
    findall(X, Goal, Bag).
aggregate_all(set(X), Goal, Set) :-
    !,
    findall(X, Goal, Bag),
    sort(Bag, Set).
aggregate_all(Spec, _, _) :-
    throw(error(domain_error(aggregate_template, Spec), aggregate_all/3)).

% aggregate_best_(+Pairs, +Cmp, +Best0, +Witness0, -Best, -Witness):
% the first pair whose value is strictly better wins.
aggregate_best_([], _, Best, Witness, Best, Witness).
aggregate_best_([X-W|Pairs], Cmp, Best0, Witness0, Best, Witness) :-
    aggregate_pick_(Cmp, X, W, Best0, Witness0, Best1, Witness1),
    aggregate_best_(Pairs, Cmp, Best1, Witness1, Best, Witness).

% aggregate_pick_(+Cmp, +X, +W, +Best0, +Witness0, -Best, -Witness)
aggregate_pick_(>, X, W, Best0, _, X, W) :-
    X > Best0,
    !.
aggregate_pick_(<, X, W, Best0, _, X, W) :-
    X < Best0,
    !.
aggregate_pick_(_, _, _, Best, Witness, Best, Witness).

%!  findall(+Template, :Goal, -Bag, ?Tail) is det.
%
%   findall/3 whose Bag ends in Tail.
findall(Template, Goal, Bag, Tail) :-
    findall(Template, Goal, Bag0),
    append(Bag0, Tail, Bag).

/* --- Pairs and more lists --- */

%!  pairs_keys_values(?Pairs, ?Keys, ?Values) is det.
%
%   Pairs is the list of Key-Value of the corresponding Keys and Values.
pairs_keys_values([], [], []).
pairs_keys_values([K-V|Pairs], [K|Ks], [V|Vs]) :-
    pairs_keys_values(Pairs, Ks, Vs).

%!  pairs_keys(?Pairs, ?Keys) is det.
%
%   Keys are the keys of the Key-Value Pairs.
pairs_keys([], []).
pairs_keys([K-_|Pairs], [K|Ks]) :-
    pairs_keys(Pairs, Ks).

%!  pairs_values(?Pairs, ?Values) is det.
%
%   Values are the values of the Key-Value Pairs.
pairs_values([], []).
pairs_values([_-V|Pairs], [V|Vs]) :-
    pairs_values(Pairs, Vs).

%!  selectchk(?Elem, ?List, ?Rest) is semidet.
%
%   select/3, first solution only.
selectchk(Elem, List, Rest) :-
    select(Elem, List, Rest0),
    !,
    Rest = Rest0.

%!  nextto(?X, ?Y, ?List) is nondet.
%
%   Y directly follows X in List.
nextto(X, Y, [X,Y|_]).
nextto(X, Y, [_|Zs]) :-
    nextto(X, Y, Zs).

%!  flatten(+NestedList, -FlatList) is det.
%
%   FlatList has the non-list elements of NestedList, depth first.
%   Chars lists (the dialect's strings) are lists, so they are
%   flattened too; unbound variables are kept as elements.
flatten(List, FlatList) :-
    flatten_(List, [], FlatList0),
    !,
    FlatList = FlatList0.

% flatten_(+Term, ?Tail, -Flat)
flatten_(Var, Tail, [Var|Tail]) :-
    var(Var),
    !.
flatten_([], Tail, Tail) :-
    !.
flatten_([Head|Rest], Tail, Flat) :-
    !,
    flatten_(Head, FlatRest, Flat),
    flatten_(Rest, Tail, FlatRest).
flatten_(NonList, Tail, [NonList|Tail]).

%!  permutation(?Xs, ?Ys) is nondet.
%
%   Ys is a permutation of Xs; one of them must be a proper list.
permutation(Xs, Ys) :-
    permutation_length_(Xs, Ys),
    permutation_(Xs, Ys).

% permutation_length_(?Xs, ?Ys): give both lists the known length.
permutation_length_(Xs, Ys) :-
    is_list(Xs),
    !,
    length(Xs, N),
    length(Ys, N).
permutation_length_(Xs, Ys) :-
    is_list(Ys),
    !,
    length(Ys, N),
    length(Xs, N).
permutation_length_(_, _).

% permutation_(+Xs, ?Ys)
permutation_([], []).
permutation_(Xs, [Y|Ys]) :-
    select(Y, Xs, Rest),
    permutation_(Rest, Ys).

/* --- Strings --- */

%!  string_concat(?S1, ?S2, ?S3) is nondet.
%
%   S3 is S1 followed by S2, as chars. With only S3 bound, enumerates
%   its splits from the shortest S1.
string_concat(S1, S2, S3) :-
    var(S1),
    var(S2),
    !,
    string_concat_splits_(S3, Pairs),
    member(S1-S2, Pairs).
string_concat(S1, S2, S3) :-
    string_concat_(S1, S2, S3).

/* --- Character classification --- */

%!  char_type(?Char, ?Type) is nondet.
%
%   Char has Type, one of alnum, alpha, csym, csymf, ascii, white, cntrl,
%   digit(Weight), space, end_of_line, lower(Upper), upper(Lower), punct,
%   graph, print, period, quote, to_lower(Upper), to_upper(Lower), digit,
%   lower, upper, newline, prolog_var_start, prolog_atom_start,
%   prolog_identifier_continue and prolog_symbol, as in SWI (whose
%   to_lower(U) gives the upper case U). Char must be bound, except for
%   upper(L), lower(U), to_lower(C) and to_upper(C) with the argument
%   bound.
char_type(Char, Type) :-
    char_types_(Char, Type, false, Types),
    member(Type, Types).

%!  code_type(?Code, ?Type) is nondet.
%
%   char_type/2 for character codes (a char is accepted too).
code_type(Code, Type) :-
    char_types_(Code, Type, true, Types),
    member(Type, Types).

/* --- Lambdas (library(yall)) --- */

%!  >>(+Params, :Lambda) is nondet.
%!  >>(+Params, :Lambda, ?A1) is nondet.
%!  >>(+Params, :Lambda, ?A1, ?A2) is nondet.
%!  >>(+Params, :Lambda, ?A1, ?A2, ?A3) is nondet.
%!  >>(+Params, :Lambda, ?A1, ?A2, ?A3, ?A4) is nondet.
%!  >>(+Params, :Lambda, ?A1, ?A2, ?A3, ?A4, ?A5) is nondet.
%!  >>(+Params, :Lambda, ?A1, ?A2, ?A3, ?A4, ?A5, ?A6) is nondet.
%!  >>(+Params, :Lambda, ?A1, ?A2, ?A3, ?A4, ?A5, ?A6, ?A7) is nondet.
%
%   yall lambdas: `[X1,...]>>Goal` called with arguments binds the
%   parameters to them (extra arguments are appended to Goal) and calls
%   a copy of the lambda, so its other variables are not bound outside;
%   `Free/[X1,...]>>Goal` shares the variables of Free. `\X^Goal` is not
%   supported.
%
%   ?- foldl([X,A0,A]>>(A is A0+X), [1,2,3], 0, S).
%   S = 6.
'>>'(Ps, L) :-
    yall_(Ps, L, []).
'>>'(Ps, L, A1) :-
    yall_(Ps, L, [A1]).
'>>'(Ps, L, A1, A2) :-
    yall_(Ps, L, [A1,A2]).
'>>'(Ps, L, A1, A2, A3) :-
    yall_(Ps, L, [A1,A2,A3]).
'>>'(Ps, L, A1, A2, A3, A4) :-
    yall_(Ps, L, [A1,A2,A3,A4]).
'>>'(Ps, L, A1, A2, A3, A4, A5) :-
    yall_(Ps, L, [A1,A2,A3,A4,A5]).
'>>'(Ps, L, A1, A2, A3, A4, A5, A6) :-
    yall_(Ps, L, [A1,A2,A3,A4,A5,A6]).
'>>'(Ps, L, A1, A2, A3, A4, A5, A6, A7) :-
    yall_(Ps, L, [A1,A2,A3,A4,A5,A6,A7]).

% yall_(+Params, +Lambda, +Args): copy, bind the parameters, call.
yall_(Free/Ps, L, Args) :-
    !,
    yall_copy_(Free, Ps>>L, Ps1>>L1),
    yall_bind_(Ps1, Args, Rest),
    yall_goal_(Rest, L1, G),
    call(G).
yall_(Ps, L, Args) :-
    yall_copy_([], Ps>>L, Ps1>>L1),
    yall_bind_(Ps1, Args, Rest),
    yall_goal_(Rest, L1, G),
    call(G).

% yall_bind_(?Params, +Args, -Rest): unify parameters with arguments.
yall_bind_([], Rest, Rest) :-
    !.
yall_bind_([P|Ps], [A|As], Rest) :-
    !,
    P = A,
    yall_bind_(Ps, As, Rest).
yall_bind_(_, [], []).

% yall_goal_(+Extra, +Goal0, -Goal): append extra arguments to Goal0.
yall_goal_([], G, G) :-
    !.
yall_goal_(Extra, G0, G) :-
    G0 =.. L0,
    append(L0, Extra, L),
    G =.. L.

/* --- Output --- */

%!  print(@Term) is det.
%
%   Writes Term as print/1 does without portray hooks: writeq/1.
print(Term) :-
    writeq(Term).

%!  print(+Stream, @Term) is det.
%
%   print/1 to Stream.
print(Stream, Term) :-
    writeq(Stream, Term).

%!  writeln(@Term) is det.
%
%   Writes Term with write/1 and a newline.
writeln(Term) :-
    write(Term),
    nl.

%!  writeln(+Stream, @Term) is det.
%
%   writeln/1 to Stream.
writeln(Stream, Term) :-
    write(Stream, Term),
    nl(Stream).

/* --- Cleanup --- */

%!  setup_call_cleanup(:Setup, :Goal, :Cleanup) is semidet.
%
%   Calls once(Setup), then Goal, then Cleanup, however Goal ends: with
%   success, failure or an exception (re-thrown after Cleanup). Unlike
%   SWI-Prolog, Goal is called as once/1: ichiban cannot tell when a
%   choice point left by Goal is cut, so Cleanup could not be run then;
%   committing to the first solution runs it exactly once, at once.
%   Cleanup's failure is ignored; its exception is printed as a warning.
%
%   ?- setup_call_cleanup(true, member(X, [1,2]), writeln(done)).
%   done
%   X = 1.
setup_call_cleanup(Setup, Goal, Cleanup) :-
    once(Setup),
    (   catch(Goal, E, true)
    ->  cleanup_(Cleanup),
        (   var(E)
        ->  true
        ;   throw(E)
        )
    ;   cleanup_(Cleanup),
        fail
    ).

% cleanup_(+Cleanup): call it once; report an exception, ignore failure.
cleanup_(Cleanup) :-
    catch(Cleanup, E, (print_message(warning, E), true)),
    !.
cleanup_(_).

%!  call_cleanup(:Goal, :Cleanup) is semidet.
%
%   setup_call_cleanup(true, Goal, Cleanup).
call_cleanup(Goal, Cleanup) :-
    setup_call_cleanup(true, Goal, Cleanup).

/* --- Database and global variables --- */

%!  assert(+Clause) is det.
%
%   assertz/1.
assert(Clause) :-
    assertz(Clause).

%!  nb_current(?Key, ?Value) is nondet.
%
%   Key is a global variable (nb_setval/2) whose value is Value; with Key
%   unbound, enumerates them in standard order.
nb_current(Key, Value) :-
    atom(Key),
    !,
    nb_keys_(Keys),
    memberchk(Key, Keys),
    nb_getval(Key, Value).
nb_current(Key, Value) :-
    nb_keys_(Keys),
    member(Key, Keys),
    nb_getval(Key, Value).

/* --- More lists --- */

%!  nth0(?N, ?List, ?Elem, ?Rest) is nondet.
%
%   Elem is the N-th element of List, counting from 0, and Rest the
%   other elements.
nth0(N, List, Elem, Rest) :-
    var(N),
    !,
    nth_gen_(List, Elem, Rest, 0, N).
nth0(N, List, Elem, Rest) :-
    must_be(nonneg, N),
    nth_del_(N, List, Elem, Rest).

%!  nth1(?N, ?List, ?Elem, ?Rest) is nondet.
%
%   nth0/4 counting from 1.
nth1(N, List, Elem, Rest) :-
    var(N),
    !,
    nth_gen_(List, Elem, Rest, 1, N).
nth1(N, List, Elem, Rest) :-
    must_be(positive_integer, N),
    N0 is N - 1,
    nth_del_(N0, List, Elem, Rest).

% nth_gen_(?List, ?Elem, ?Rest, +I0, -N)
nth_gen_([Elem|Rest], Elem, Rest, N, N).
nth_gen_([H|T], Elem, [H|Rest], I0, N) :-
    I is I0 + 1,
    nth_gen_(T, Elem, Rest, I, N).

% nth_del_(+N, ?List, ?Elem, ?Rest)
nth_del_(0, [Elem|Rest], Elem, Rest) :-
    !.
nth_del_(N, [H|T], Elem, [H|Rest]) :-
    N1 is N - 1,
    nth_del_(N1, T, Elem, Rest).

%!  select(?X, ?Xs, ?Y, ?Ys) is nondet.
%
%   Ys is Xs with one element X replaced by Y.
select(X, Xs, Y, Ys) :-
    select4_(Xs, X, Y, Ys).

% select4_(?Xs, ?X, ?Y, ?Ys)
select4_([X|T], X, Y, [Y|T]).
select4_([H|T], X, Y, [H|T2]) :-
    select4_(T, X, Y, T2).

/* --- More pairs (library(pairs)) --- */

%!  transpose_pairs(+Pairs, -Transposed) is det.
%
%   Transposed has the Value-Key of each Key-Value, sorted on the new keys
%   by keysort/2.
transpose_pairs(Pairs, Transposed) :-
    flip_pairs_(Pairs, Flipped),
    keysort(Flipped, Transposed).

% flip_pairs_(+Pairs, -Flipped)
flip_pairs_([], []).
flip_pairs_([K-V|Pairs], [V-K|Flipped]) :-
    flip_pairs_(Pairs, Flipped).

%!  map_list_to_pairs(:Function, +List, -Pairs) is det.
%
%   Pairs has K-E for each E of List, where call(Function, E, K).
%
%   ?- map_list_to_pairs(atom_length, [ab, c], Ps).
%   Ps = [2-ab, 1-c].
map_list_to_pairs(Function, List, Pairs) :-
    map_list_to_pairs_(List, Function, Pairs).

% map_list_to_pairs_(+List, +Function, -Pairs)
map_list_to_pairs_([], _, []).
map_list_to_pairs_([E|Es], Function, [K-E|Pairs]) :-
    call(Function, E, K),
    map_list_to_pairs_(Es, Function, Pairs).

%!  group_pairs_by_key(+Pairs, -Joined) is det.
%
%   Joined has Key-Values for each run of pairs with the same key (==) in
%   Pairs, which is usually keysorted.
%
%   ?- group_pairs_by_key([a-1, a-2, b-3], G).
%   G = [a-[1,2], b-[3]].
group_pairs_by_key([], []).
group_pairs_by_key([K-V|Pairs], [K-[V|Vs]|Joined]) :-
    same_key_(K, Pairs, Vs, Rest),
    group_pairs_by_key(Rest, Joined).

% same_key_(+Key, +Pairs, -Values, -Rest)
same_key_(K0, [K-V|Pairs], [V|Vs], Rest) :-
    K0 == K,
    !,
    same_key_(K, Pairs, Vs, Rest).
same_key_(_, Rest, [], Rest).

/* --- Ordered sets (library(ordsets)) --- */

%!  list_to_ord_set(+List, -OrdSet) is det.
%
%   OrdSet is List sorted, without duplicates.
list_to_ord_set(List, OrdSet) :-
    sort(List, OrdSet).

%!  ord_union(+Set1, +Set2, -Union) is det.
%
%   Union of two ordered sets.
ord_union(Set1, Set2, Union) :-
    append(Set1, Set2, All),
    sort(All, Union).

%!  ord_subtract(+Set, +Delete, -Remaining) is det.
%
%   Remaining has the elements of the ordered set Set not in Delete.
ord_subtract([], _, []).
ord_subtract([H|T], Delete, Remaining) :-
    ord_subtract_(Delete, H, T, Remaining).

% ord_subtract_(+Delete, +H, +T, -Remaining)
ord_subtract_([], H, T, [H|T]).
ord_subtract_([D|Ds], H, T, Remaining) :-
    compare(Order, H, D),
    ord_subtract_(Order, H, T, D, Ds, Remaining).

% ord_subtract_(+Order, +H, +T, +D, +Ds, -Remaining)
ord_subtract_(<, H, T, D, Ds, [H|Remaining]) :-
    ord_subtract_rest_(T, D, Ds, Remaining).
ord_subtract_(=, _, T, _, Ds, Remaining) :-
    ord_subtract(T, Ds, Remaining).
ord_subtract_(>, H, T, _, Ds, Remaining) :-
    ord_subtract_(Ds, H, T, Remaining).

% ord_subtract_rest_(+T, +D, +Ds, -Remaining)
ord_subtract_rest_([], _, _, []).
ord_subtract_rest_([H|T], D, Ds, Remaining) :-
    ord_subtract_([D|Ds], H, T, Remaining).

%!  ord_memberchk(+Elem, +OrdSet) is semidet.
%
%   Elem is (==) an element of the ordered set OrdSet.
ord_memberchk(Elem, [H|T]) :-
    compare(Order, Elem, H),
    ord_memberchk_(Order, Elem, T).

% ord_memberchk_(+Order, +Elem, +T)
ord_memberchk_(=, _, _).
ord_memberchk_(>, Elem, T) :-
    ord_memberchk(Elem, T).

/* --- More strings --- */

%!  text_concat(?T1, ?T2, ?T3) is nondet.
%
%   atom_concat/3 when T1 and T2 are atomic or T3 is an atom, else
%   string_concat/3 (the result is text, a chars list).
text_concat(T1, T2, T3) :-
    atomic(T1),
    atomic(T2),
    !,
    atomic_list_concat([T1, T2], T3).
text_concat(T1, T2, T3) :-
    atom(T3),
    !,
    atom_concat(T1, T2, T3).
text_concat(T1, T2, T3) :-
    string_concat(T1, T2, T3).

%!  string_code(?Index, +String, ?Code) is nondet.
%
%   Code is the code of the character at Index (from 1) of String.
string_code(Index, String, Code) :-
    string_chars(String, Chars),
    nth1(Index, Chars, Char),
    char_code(Char, Code).

/* --- Association lists (library(assoc)) --- */

% The AVL trees are t(Key, Value, Balance, Left, Right), t when empty;
% get_assoc/3, put_assoc/4 and list_to_assoc/2 are in Go (library.go).

%!  empty_assoc(?Assoc) is semidet.
%
%   Assoc is the empty association list.
empty_assoc(t).

%!  assoc_to_list(+Assoc, -Pairs) is det.
%
%   Pairs is the Key-Value list of Assoc, in key order.
assoc_to_list(Assoc, Pairs) :-
    assoc_to_list_(Assoc, Pairs, []).

% assoc_to_list_(+Assoc, -Pairs, ?Tail)
assoc_to_list_(t, Pairs, Pairs).
assoc_to_list_(t(K,V,_,L,R), Pairs, Tail) :-
    assoc_to_list_(L, Pairs, [K-V|More]),
    assoc_to_list_(R, More, Tail).

%!  assoc_to_keys(+Assoc, -Keys) is det.
%
%   Keys are the keys of Assoc, in order.
assoc_to_keys(Assoc, Keys) :-
    assoc_to_list(Assoc, Pairs),
    pairs_keys(Pairs, Keys).

%!  assoc_to_values(+Assoc, -Values) is det.
%
%   Values are the values of Assoc, in key order.
assoc_to_values(Assoc, Values) :-
    assoc_to_list(Assoc, Pairs),
    pairs_values(Pairs, Values).

%!  max_assoc(+Assoc, -Key, -Value) is semidet.
%
%   Key-Value is the pair of Assoc with the greatest key.
max_assoc(t(K,V,_,_,R), Key, Value) :-
    max_assoc_(R, K, V, Key, Value).

% max_assoc_(+Right, +K, +V, -Key, -Value)
max_assoc_(t, K, V, K, V).
max_assoc_(t(K,V,_,_,R), _, _, Key, Value) :-
    max_assoc_(R, K, V, Key, Value).

%!  min_assoc(+Assoc, -Key, -Value) is semidet.
%
%   Key-Value is the pair of Assoc with the least key.
min_assoc(t(K,V,_,L,_), Key, Value) :-
    min_assoc_(L, K, V, Key, Value).

% min_assoc_(+Left, +K, +V, -Key, -Value)
min_assoc_(t, K, V, K, V).
min_assoc_(t(K,V,_,L,_), _, _, Key, Value) :-
    min_assoc_(L, K, V, Key, Value).

%!  map_assoc(:Pred, +Assoc) is semidet.
%
%   call(Pred, V) holds for every value V of Assoc.
map_assoc(_, t).
map_assoc(Pred, t(_,V,_,L,R)) :-
    map_assoc(Pred, L),
    call(Pred, V),
    map_assoc(Pred, R).

%!  map_assoc(:Pred, +Assoc0, -Assoc) is semidet.
%
%   Assoc has the keys of Assoc0 and call(Pred, V0, V) of its values.
map_assoc(_, t, t).
map_assoc(Pred, t(K,V0,B,L0,R0), t(K,V,B,L,R)) :-
    map_assoc(Pred, L0, L),
    call(Pred, V0, V),
    map_assoc(Pred, R0, R).
