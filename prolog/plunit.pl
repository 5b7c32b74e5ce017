/** <module> plunit: SWI-Prolog's unit tests, the running half

Test files written for SWI-Prolog load and run unchanged:

    :- use_module(library(plunit)).
    :- begin_tests(lists).
    test(reverse) :- reverse([a,b], [b,a]).
    test(member, [nondet]) :- member(b, [a,b,c]).
    test(add, [true(X == 3)]) :- X is 1 + 2.
    test(bad, [fail]) :- 1 =:= 2.
    test(err, [error(type_error(_, _))]) :- atom_length(1, _).
    :- end_tests(lists).
    :- initialization(run_tests, main).

begin_tests/1,2 and end_tests/1 (plunit.go) collect the test clauses of a
unit. Test options: true(Cond) (or a bare comparison such as X == 3),
all(X Cmp L), set(X Cmp L), fail (false), throws(E), error(E), nondet
and det (accepted; choice points are not checked: ichiban cannot see
them), setup(G), cleanup(G), condition(G), blocked(Reason), fixme(Reason)
(run, reported, never counted as a failure), forall(Generator). Unit
options: setup(G), cleanup(G), condition(G), blocked(Reason).

Output goes to user_error (here user_output): a line per unit, an ERROR
line per failing test, and SWI's summary, "% All N tests passed" or
"% F tests failed" and "% P tests passed". run_tests/0,1 fails when a
test failed, so a script ending in initialization(run_tests, main) exits
1.

use_module/1,2 and module/2 are here too: ichiban has no modules, so
library(_) and this host's own library (rlm, rlm_*) are built in, a
module/2 declaration is a no-op and any other file is consulted.

Exports:
    run_tests/0                  %
    run_tests/1                  % +Spec
    assertion/1                  % :Goal
    use_module/1                 % +File
    use_module/2                 % +File, +Imports
    module/2                     % +Module, +Exports
*/

%!  run_tests is semidet.
%
%   Runs every loaded unit; fails when a test failed.
run_tests :-
    run_tests(all).

%!  run_tests(+Spec) is semidet.
%
%   Spec is all, a unit, Unit:Test, Unit:[Tests] or a list of these.
run_tests(Spec) :-
    '$plunit_units'(Units),
    plunit_select_(Spec, Units, Selected),
    foldl(plunit_unit_, Selected, c(0, 0, 0), c(Passed, Failed, Blocked)),
    plunit_summary_(Passed, Failed, Blocked),
    Failed =:= 0.

% plunit_select_(+Spec, +Units, -Selected): unit(Name, Opts, Tests) terms.
plunit_select_(all, Units, Units) :- !.
plunit_select_([], _, []) :- !.
plunit_select_([S|Ss], Units, Selected) :-
    !,
    plunit_select_(S, Units, S1),
    plunit_select_(Ss, Units, S2),
    append(S1, S2, Selected).
plunit_select_(Unit:Tests, Units, [unit(Unit, Opts, Picked)]) :-
    !,
    plunit_unit_named_(Unit, Units, Opts, All),
    plunit_as_list_(Tests, Names),
    include(plunit_test_in_(Names), All, Picked).
plunit_select_(Unit, Units, [unit(Unit, Opts, Tests)]) :-
    plunit_unit_named_(Unit, Units, Opts, Tests).

plunit_unit_named_(Unit, Units, Opts, Tests) :-
    memberchk(unit(Unit, Opts, Tests), Units),
    !.
plunit_unit_named_(Unit, _, _, _) :-
    throw(error(existence_error(unit_test, Unit), run_tests/1)).

plunit_as_list_(L, L) :- is_list(L), !.
plunit_as_list_(X, [X]).

plunit_test_in_(Names, t(Name, _)) :-
    memberchk(Name, Names).

% plunit_unit_(+Unit, +Counts0, -Counts): run one unit.
plunit_unit_(unit(U, Opts, Tests), C0, C) :-
    plunit_unit_skip_(Opts, Why),
    !,
    length(Tests, N),
    format(user_error, "% PL-Unit: ~w skipped (~w)~n", [U, Why]),
    C0 = c(P, F, B0),
    B is B0 + N,
    C = c(P, F, B).
plunit_unit_(unit(U, Opts, Tests), C0, C) :-
    format(user_error, "% PL-Unit: ~w ", [U]),
    plunit_option_(setup(Setup), Opts, true),
    plunit_option_(cleanup(Cleanup), Opts, true),
    (   catch(Setup, E, (plunit_report_(U, '(setup)', error(E)), fail))
    ->  foldl(plunit_test_(U), Tests, C0, C),
        ignore(catch(Cleanup, _, true))
    ;   length(Tests, N),
        C0 = c(P, F0, B),
        F is F0 + N,
        C = c(P, F, B)
    ),
    format(user_error, " done~n", []).

plunit_unit_skip_(Opts, blocked(R)) :-
    memberchk(blocked(R), Opts).
plunit_unit_skip_(Opts, condition) :-
    memberchk(condition(G), Opts),
    \+ catch(G, _, fail).

% plunit_option_(?Opt, +Opts, +Default): the first Opt, else Default as
% its argument.
plunit_option_(Opt, Opts, _) :-
    memberchk(Opt, Opts),
    !.
plunit_option_(Opt, _, Default) :-
    arg(1, Opt, Default).

% plunit_test_(+Unit, +Test, +Counts0, -Counts)
plunit_test_(U, t(Name, Pred), c(P0, F0, B0), c(P, F, B)) :-
    call(Pred, Opts0, Body),
    plunit_opts_(Opts0, Opts),
    plunit_outcome_(Opts, Body, Outcome),
    plunit_count_(Outcome, U, Name, P0, F0, B0, P, F, B).

plunit_count_(passed, _, _, P0, F, B, P, F, B) :-
    !,
    P is P0 + 1,
    format(user_error, ".", []).
plunit_count_(skipped, _, _, P, F, B0, P, F, B) :-
    !,
    B is B0 + 1.
plunit_count_(blocked(_), _, _, P, F, B0, P, F, B) :-
    !,
    B is B0 + 1,
    format(user_error, "B", []).
plunit_count_(fixme(Why), U, Name, P, F, B0, P, F, B) :-
    !,
    B is B0 + 1,
    format(user_error, "~n% test ~w:~q: fixme (~w)~n", [U, Name, Why]).
plunit_count_(Failure, U, Name, P, F0, B, P, F, B) :-
    F is F0 + 1,
    plunit_report_(U, Name, Failure).

plunit_report_(U, Name, Failure) :-
    plunit_failure_text_(Failure, Fmt, Args),
    format(user_error, "~nERROR: test ~w:~q: ", [U, Name]),
    format(user_error, Fmt, Args),
    format(user_error, "~n", []).

plunit_failure_text_(failed, "failed", []) :- !.
plunit_failure_text_(succeeded, "must fail but succeeded", []) :- !.
plunit_failure_text_(no_exception(E), "must raise ~q but did not", [E]) :- !.
plunit_failure_text_(wrong_error(Exp, E), "wrong error: expected ~q, got ~q", [Exp, E]) :- !.
plunit_failure_text_(wrong_answer(Cond), "wrong answer (compared ~q)", [Cond]) :- !.
plunit_failure_text_(assertion(G), "assertion failed: ~q", [G]) :- !.
plunit_failure_text_(error(error(assertion_failed(G), _)), "assertion failed: ~q", [G]) :- !.
plunit_failure_text_(error(E), "received error: ~q", [E]) :- !.
plunit_failure_text_(setup_failed, "setup failed", []) :- !.
plunit_failure_text_(X, "~q", [X]).

% plunit_opts_(+Opts0, -Opts): a list; a bare comparison is true(Cmp).
plunit_opts_(O, Opts) :-
    is_list(O),
    !,
    maplist(plunit_opt_, O, Opts).
plunit_opts_(O, [Opt]) :-
    plunit_opt_(O, Opt).

plunit_opt_(O, true(O)) :-
    compound(O),
    functor(O, F, 2),
    memberchk(F, [==, =, =:=, =@=, \==, \=, =\=, <, >, =<, >=, @<, @>, @=<, @>=]),
    !.
plunit_opt_(false, fail) :- !.
plunit_opt_(error(E), throws(error(E, _))) :- !.
plunit_opt_(O, O).

% plunit_outcome_(+Opts, +Body, -Outcome)
plunit_outcome_(Opts, _, blocked(R)) :-
    memberchk(blocked(R), Opts),
    !.
plunit_outcome_(Opts, _, skipped) :-
    memberchk(condition(C), Opts),
    \+ catch(C, _, fail),
    !.
plunit_outcome_(Opts0, Body, Outcome) :-
    selectchk(forall(Gen), Opts0, Opts),
    !,
    findall(Opts-Body, Gen, Instances),
    plunit_forall_(Instances, Outcome).
plunit_outcome_(Opts, Body, Outcome) :-
    plunit_option_(setup(Setup), Opts, true),
    plunit_option_(cleanup(Cleanup), Opts, true),
    plunit_setup_(Setup, Ok),
    plunit_run_(Ok, Opts, Body, Outcome0),
    ignore(catch(Cleanup, _, true)),
    plunit_fixme_(Opts, Outcome0, Outcome).

plunit_forall_([], passed).
plunit_forall_([Opts-Body|Is], Outcome) :-
    plunit_outcome_(Opts, Body, O1),
    plunit_forall_next_(O1, Is, Outcome).

plunit_forall_next_(passed, Is, Outcome) :- !, plunit_forall_(Is, Outcome).
plunit_forall_next_(O, _, O).

plunit_setup_(Setup, Ok) :-
    catch(Setup, E, true),
    !,
    plunit_setup_ok_(E, Ok).
plunit_setup_(_, setup_failed).

plunit_setup_ok_(E, ok) :- var(E), !.
plunit_setup_ok_(E, error(E)).

plunit_fixme_(Opts, passed, passed) :-
    \+ memberchk(fixme(_), Opts),
    !.
plunit_fixme_(Opts, _, fixme(Why)) :-
    memberchk(fixme(Why), Opts),
    !.
plunit_fixme_(_, O, O).

% plunit_run_(+SetupOk, +Opts, +Body, -Outcome)
plunit_run_(ok, Opts, Body, Outcome) :-
    !,
    plunit_expect_(Opts, Expect),
    plunit_check_(Expect, Body, Outcome).
plunit_run_(Failure, _, _, Failure).

plunit_expect_(Opts, fail) :- memberchk(fail, Opts), !.
plunit_expect_(Opts, throws(E)) :- memberchk(throws(E), Opts), !.
plunit_expect_(Opts, all(C)) :- memberchk(all(C), Opts), !.
plunit_expect_(Opts, set(C)) :- memberchk(set(C), Opts), !.
plunit_expect_(Opts, true(C)) :- memberchk(true(C), Opts), !.
plunit_expect_(_, true(true)).

plunit_check_(fail, Body, Outcome) :-
    catch(Body, E, true),
    !,
    plunit_failed_body_(E, Outcome).
plunit_check_(fail, _, passed).
plunit_check_(throws(Exp), Body, Outcome) :-
    catch(Body, E, true),
    !,
    plunit_thrown_(Exp, E, Outcome).
plunit_check_(throws(Exp), _, no_exception(Exp)).
plunit_check_(all(Cmp), Body, Outcome) :-
    Cmp =.. [Op, Template, Expected],
    catch(findall(Template, Body, Got), E, true),
    plunit_all_(E, Op, Got, Expected, Cmp, Outcome).
plunit_check_(set(Cmp), Body, Outcome) :-
    Cmp =.. [Op, Template, Expected0],
    catch(findall(Template, Body, Got0), E, true),
    plunit_set_(E, Got0, Got),
    sort(Expected0, Expected),
    plunit_all_(E, Op, Got, Expected, Cmp, Outcome).
plunit_check_(true(Cond), Body, Outcome) :-
    catch(Body, E, true),
    !,
    plunit_answer_(E, Cond, Outcome).
plunit_check_(true(_), _, failed).

plunit_set_(E, _, []) :- nonvar(E), !.
plunit_set_(_, Got0, Got) :- sort(Got0, Got).

plunit_failed_body_(E, succeeded) :- var(E), !.
plunit_failed_body_(E, error(E)).

plunit_thrown_(Exp, E, no_exception(Exp)) :- var(E), !.
plunit_thrown_(Exp, E, passed) :- subsumes_term(Exp, E), !.
plunit_thrown_(Exp, E, wrong_error(Exp, E)).

plunit_all_(E, _, _, _, _, error(E)) :- nonvar(E), !.
plunit_all_(_, Op, Got, Expected, _, passed) :-
    G =.. [Op, Got, Expected],
    catch(G, _, fail),
    !.
plunit_all_(_, _, Got, _, Cmp, wrong_answer(Cmp-got(Got))).

plunit_answer_(E, _, Outcome) :-
    nonvar(E),
    !,
    plunit_error_outcome_(E, Outcome).
plunit_answer_(_, Cond, passed) :-
    catch(Cond, _, fail),
    !.
plunit_answer_(_, Cond, wrong_answer(Cond)).

plunit_error_outcome_(error(assertion_failed(G), _), assertion(G)) :- !.
plunit_error_outcome_(E, error(E)).

plunit_summary_(P, 0, B) :-
    !,
    plunit_blocked_(B),
    plunit_plural_(P, S),
    format(user_error, "% All ~d test~w passed~n", [P, S]).
plunit_summary_(P, F, B) :-
    plunit_blocked_(B),
    plunit_plural_(F, SF),
    plunit_plural_(P, SP),
    format(user_error, "% ~d test~w failed~n% ~d test~w passed~n", [F, SF, P, SP]).

plunit_blocked_(0) :- !.
plunit_blocked_(B) :-
    plunit_plural_(B, S),
    format(user_error, "% ~d test~w blocked or skipped~n", [B, S]).

plunit_plural_(1, '') :- !.
plunit_plural_(_, s).

%!  assertion(:Goal) is det.
%
%   Goal must succeed (its bindings are dropped); otherwise
%   error(assertion_failed(Goal), assertion/1) is thrown, which a
%   running test reports as "assertion failed".
assertion(G) :-
    \+ \+ catch(G, _, fail),
    !.
assertion(G) :-
    throw(error(assertion_failed(G), assertion/1)).

%!  use_module(+File) is det.
%
%   library(_) and this host's library (rlm, rlm_...) are built in; any
%   other file is consulted once (File or File.pl).
use_module(Spec) :-
    plunit_builtin_module_(Spec),
    !.
use_module(Spec) :-
    plunit_module_file_(Spec, File),
    consult(File).

%!  use_module(+File, +Imports) is det.
%
%   use_module/1; Imports is ignored (there are no modules).
use_module(Spec, _) :-
    use_module(Spec).

%!  module(+Module, +Exports) is det.
%
%   No-op: every predicate is global.
module(_, _).

plunit_builtin_module_(library(_)).
plunit_builtin_module_(Spec) :-
    atom(Spec),
    atomic_list_concat(Parts, '/', Spec),
    last(Parts, Base),
    plunit_strip_pl_(Base, Name),
    plunit_rlm_name_(Name),
    !.

plunit_strip_pl_(Base, Name) :- atom_concat(Name, '.pl', Base), !.
plunit_strip_pl_(Name, Name).

plunit_rlm_name_(rlm) :- !.
plunit_rlm_name_(Name) :- sub_atom(Name, 0, _, _, rlm_).

plunit_module_file_(Spec, Spec) :-
    atom_concat(_, '.pl', Spec),
    !.
plunit_module_file_(Spec, File) :-
    atom_concat(Spec, '.pl', File).
