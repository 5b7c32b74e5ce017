% The benchmark driver, prepended to a workload file: runs the setup of one
% workload untimed, then its goal under statistics(cputime, _), and prints
% bench_result(Name, Status, CPUSeconds).
:- dynamic(setup/2).

bench_run(Name) :-
    workload(Name, Goal),
    (   setup(Name, Setup)
    ->  call(Setup)
    ;   true
    ),
    statistics(cputime, T0),
    (   catch(Goal, E, (write(error(E)), nl, fail))
    ->  Status = ok
    ;   Status = failed
    ),
    statistics(cputime, T1),
    T is T1 - T0,
    write(bench_result(Name, Status, T)), nl.
